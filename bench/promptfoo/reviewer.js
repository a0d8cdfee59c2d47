// A promptfoo custom provider that reviews like assay's builtin agent against the fake:
// the same tools, called in a loop through the Anthropic SDK (promptfoo's own copy) until
// the model calls submit_findings. Against bench_promptfoo.py's fake that is 3 sequential
// calls (list_dir, read_file, submit_findings); promptfoo's llm-rubric makes the 4th.
const fs = require("fs");
const path = require("path");
const sdk = require(
  require.resolve("@anthropic-ai/sdk", { paths: [process.env.PROMPTFOO_NODE_MODULES] }),
);
const Anthropic = sdk.Anthropic || sdk.default || sdk;

const TOOLS = [
  {
    name: "list_dir",
    description: "List a directory of the repository.",
    input_schema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  },
  {
    name: "read_file",
    description: "Read a file of the repository.",
    input_schema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  },
  {
    name: "submit_findings",
    description: "Submit the review's findings.",
    input_schema: {
      type: "object",
      properties: { findings: { type: "array", items: { type: "object" } } },
      required: ["findings"],
    },
  },
];

class Reviewer {
  constructor(options) {
    this.providerId = options.id || "assay-like-reviewer";
    this.client = new Anthropic({ maxRetries: 0 });
  }

  id() {
    return this.providerId;
  }

  async callApi(prompt, context) {
    const root = path.resolve(context.vars.dir);
    const messages = [{ role: "user", content: prompt }];
    for (let turn = 0; turn < 10; turn++) {
      const reply = await this.client.messages.create({
        model: "claude-haiku-4-5",
        max_tokens: 8192,
        system: [
          {
            type: "text",
            text: "You are a meticulous senior engineer reviewing a pull request.",
            cache_control: { type: "ephemeral" },
          },
        ],
        tools: TOOLS,
        tool_choice: { type: "any" },
        messages,
      });
      messages.push({ role: "assistant", content: reply.content });
      const results = [];
      for (const block of reply.content) {
        if (block.type !== "tool_use") continue;
        if (block.name === "submit_findings") return { output: JSON.stringify(block.input) };
        const target = path.resolve(root, block.input.path);
        const text =
          block.name === "list_dir" ? fs.readdirSync(target).join("\n") : fs.readFileSync(target, "utf8");
        results.push({ type: "tool_result", tool_use_id: block.id, content: text });
      }
      messages.push({ role: "user", content: results });
    }
    return { error: "no submit_findings after 10 turns" };
  }
}

module.exports = Reviewer;
