// chrollo for pi: capture every turn and recall past ones. Zero logic here — each pi event
// becomes one JSON object piped to `chrollo hook <event> --harness pi` (format: chrollo's
// pi shim v1), and read_memory runs `chrollo search --json`. Install with
// `chrollo install pi` (writes ~/.pi/agent/extensions/chrollo.ts); remove with
// `chrollo uninstall pi`. Written as plain JavaScript so it runs unchanged under pi's loader.
import { spawn } from "node:child_process";

const CHROLLO = ["chrollo"];
const TIMEOUT_MS = 5000;

function run(args, input, ms = TIMEOUT_MS) {
  return new Promise((done) => {
    let out = "";
    let p;
    try {
      p = spawn(CHROLLO[0], [...CHROLLO.slice(1), ...args], { stdio: ["pipe", "pipe", "ignore"] });
    } catch {
      return done("");
    }
    const timer = setTimeout(() => p.kill(), ms);
    p.stdout.on("data", (d) => (out += d));
    p.on("error", () => { clearTimeout(timer); done(""); });
    p.on("close", () => { clearTimeout(timer); done(out); });
    p.stdin.on("error", () => {});
    p.stdin.end(input);
  });
}

function send(event, ctx, extra) {
  const sm = ctx && ctx.sessionManager;
  const body = {
    shim: "chrollo-pi", shim_version: 1, harness: "pi", hook_event_name: event,
    session_id: sm ? sm.getSessionId() : null,
    transcript_path: (sm && sm.getSessionFile()) || null,
    cwd: ctx ? ctx.cwd : null,
    timestamp: new Date().toISOString(),
    ...extra,
  };
  return run(["hook", event, "--harness", "pi"], JSON.stringify(body));
}

async function toolSchema() {
  const props = {
    query: { type: "string", description: "Words to look for in past conversations" },
    limit: { type: "number", description: "Most hits to return (default 10)" },
  };
  try {
    const { Type } = await import("@sinclair/typebox");
    return Type.Object({ query: Type.String({ description: props.query.description }),
                         limit: Type.Optional(Type.Number({ description: props.limit.description })) });
  } catch {
    return { type: "object", properties: props, required: ["query"] };
  }
}

export default async function chrollo(pi) {
  pi.on("before_agent_start", async (event, ctx) => {
    const out = await send("before_agent_start", ctx, {
      prompt: event.prompt, image_count: event.images ? event.images.length : 0,
    });
    if (!out.trim()) return;
    return { message: { customType: "chrollo-recall", content: out, display: false } };
  });
  pi.on("agent_end", async (event, ctx) => { await send("agent_end", ctx, { messages: event.messages }); });
  pi.on("session_shutdown", async (_event, ctx) => { await send("session_shutdown", ctx, {}); });

  pi.registerTool({
    name: "read_memory",
    label: "Read memory",
    description: "Search the user's past agent conversations (all sessions, all harnesses) " +
      "for words; returns matching lines with file, line and date as JSON.",
    parameters: await toolSchema(),
    async execute(_id, params) {
      const args = ["search", "--json"];
      if (params.limit) args.push("--limit", String(params.limit));
      args.push("--", ...String(params.query || "").split(/\s+/).filter(Boolean));
      const out = await run(args, "", 30000);
      return { content: [{ type: "text", text: out || '{"hits": []}' }], details: {} };
    },
  });
}
