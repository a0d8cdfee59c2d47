import { createHmac, timingSafeEqual } from "node:crypto";
import type { Request, Response } from "express";

export interface PartnerEvent {
  id: string;
  type: "order.shipped" | "order.cancelled";
  orderId: string;
}

export function verifySignature(rawBody: Buffer, signature: string, secret: string): boolean {
  const expected = createHmac("sha256", secret).update(rawBody).digest();
  const given = Buffer.from(signature, "hex");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export function partnerWebhook(secret: string, handle: (event: PartnerEvent) => Promise<void>) {
  return async (req: Request, res: Response) => {
    const signature = req.header("X-Partner-Signature") ?? "";
    if (!verifySignature(req.body as Buffer, signature, secret)) {
      res.status(401).json({ error: "bad signature" });
      return;
    }
    await handle(JSON.parse((req.body as Buffer).toString("utf8")) as PartnerEvent);
    res.status(204).end();
  };
}
