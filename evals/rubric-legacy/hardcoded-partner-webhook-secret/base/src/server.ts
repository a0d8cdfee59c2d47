import express from "express";
import { loadConfig } from "./config.js";
import { partnerWebhook } from "./webhooks/partner.js";
import { applyPartnerEvent } from "./orders.js";

const config = loadConfig();
const app = express();

app.post(
  "/webhooks/partner",
  express.raw({ type: "application/json" }),
  partnerWebhook(config.partnerWebhookSecret, applyPartnerEvent),
);
app.use(express.json());

app.listen(config.port, () => {
  console.log(`orders-api listening on :${config.port}`);
});
