// Post a morning digest to the team's chat (a missing-module example).
// It needs the package @slack/webhook, which this workflow does not have yet, so its first run
// fails with "Cannot find module". Healer installs the package into the workflow's own
// node_modules, records it as version 1.1 and runs it again — no model, no terminal.
const { IncomingWebhook } = require("@slack/webhook");

const text = "Good morning! 3 workflows ran overnight.";
const url = process.env.DIGEST_WEBHOOK_URL;
if (url) {
  new IncomingWebhook(url).send({ text }).then(() => console.log("Digest posted"));
} else {
  // Set DIGEST_WEBHOOK_URL in the workflow's settings to post it for real.
  console.log(`Digest ready, not posted (no webhook set yet): ${text}`);
}
