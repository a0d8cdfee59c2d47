function requireEnv(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(`missing required environment variable ${name}`);
  }
  return value;
}

export interface Config {
  port: number;
  databaseUrl: string;
  partnerWebhookSecret: string;
}

export function loadConfig(): Config {
  return {
    port: Number(process.env.PORT ?? 3000),
    databaseUrl: requireEnv("DATABASE_URL"),
    partnerWebhookSecret: requireEnv("PARTNER_WEBHOOK_SECRET"),
  };
}
