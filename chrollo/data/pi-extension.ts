// chrollo for pi: capture every turn and recall past ones. Zero logic here — each pi event
// becomes one JSON object piped to `chrollo hook <event> --harness pi` (format: chrollo's
// pi shim v1); read_memory runs `chrollo search --compact` and read_memory_file `chrollo read`,
// so the model gets the same compact text as from `chrollo mcp`. Install it as a pi package
// (`pi install <chrollo checkout or git URL>`: package.json's "pi" key names this file) or
// with `chrollo install pi` (writes ~/.pi/agent/extensions/chrollo.ts with chrollo's absolute
// path); remove it with `pi remove …` / `chrollo uninstall pi`. Both at once load it once.
// Written as plain JavaScript so it runs unchanged under pi's loader.
import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import { homedir } from "node:os";

const CHROLLO = ["chrollo"];
const TIMEOUT_MS = 5000;
const HOW_TO_INSTALL = "chrollo is not installed, so this session is not remembered. Install it with one of: " +
  "uv tool install . | pipx install . | pip install . in a clone of chrollo's repository, or uv tool install git+<its URL> (or set CHROLLO_BIN to its path); then run: chrollo doctor";

// The chrollo to run: $CHROLLO_BIN, the path `chrollo install pi` wrote, `chrollo` on PATH, or
// ~/.local/bin/chrollo (where uv tool / pipx put it); null when there is none.
function findChrollo() {
  const runnable = (p) => { try { accessSync(p, constants.X_OK); return true; } catch { return false; } };
  if (process.env.CHROLLO_BIN) return runnable(process.env.CHROLLO_BIN) ? [process.env.CHROLLO_BIN] : null;
  if (CHROLLO[0] !== "chrollo") return CHROLLO;
  for (const dir of [...(process.env.PATH || "").split(delimiter), join(homedir(), ".local", "bin")]) {
    // (absolute entries only: an empty or relative one is the folder pi works in, whose own
    // ./chrollo must never run)
    if (isAbsolute(dir) && runnable(join(dir, "chrollo"))) return [join(dir, "chrollo")];
  }
  return null;
}

function exec(args, input, ms) {
  return new Promise((done) => {
    let out = "", err = "";
    let p;
    const chrollo = findChrollo();
    if (!chrollo) return done({ out: "", err: HOW_TO_INSTALL, code: -1 });
    try {
      p = spawn(chrollo[0], [...chrollo.slice(1), ...args], { stdio: ["pipe", "pipe", "pipe"] });
    } catch (e) {
      return done({ out: "", err: String(e), code: -1 });
    }
    const timer = setTimeout(() => p.kill(), ms);
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => { if (err.length < 4000) err += d; });
    p.on("error", (e) => { clearTimeout(timer); done({ out: "", err: String(e), code: -1 }); });
    p.on("close", (code) => { clearTimeout(timer); done({ out, err, code }); });
    p.stdin.on("error", () => {});
    p.stdin.end(input);
  });
}

async function run(args, input, ms = TIMEOUT_MS) {
  return (await exec(args, input, ms)).out;
}

// A tool's answer: chrollo's stdout, or what went wrong (as text the model can act on).
async function tool(args) {
  const r = await exec(args, "", 30000);
  const text = r.code === 0 ? r.out : `chrollo failed: ${r.err.trim() || "exit " + r.code}`;
  return { content: [{ type: "text", text }], details: {} };
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

// The tools' descriptions: the same as `chrollo mcp`'s (a test keeps them equal).
const DESCRIPTIONS = {
  "read_memory": "Memory of past sessions: search the memory of every previous conversation the user had with coding agents (Claude Code, Codex, Gemini, pi; all projects; the conversation history kept verbatim) to recall what we did before, what was decided, which error and which fix: earlier work you do not remember. Query with a few distinctive words or exact identifiers (function, file or error names), not a whole question. Returns up to `limit` hits, best first; each hit is `--- file:line ---`, its date and harness, then ±3 numbered lines with the matching line marked →. To see more of a hit, call read_memory_file with its file and line (a window around the line) instead of reading whole files. If nothing useful comes back, search again with other words, synonyms or exact identifiers.",
  "read_memory_file": "Read more around a read_memory hit: the numbered lines of the file it names, from `line - before` to `line + after` (defaults 3 and 20, at most 2000 each). `path` is the file as the hit shows it (relative to chrollo's folder, or absolute); only chrollo's own files can be read."
};

async function typebox() {
  try {
    return (await import("@sinclair/typebox")).Type;
  } catch {
    return null;
  }
}

function schema(T, props, required) {
  if (!T) return { type: "object", properties: props, required };
  const fields = {};
  for (const [k, v] of Object.entries(props)) {
    const f = v.type === "string" ? T.String({ description: v.description }) : T.Integer({ description: v.description });
    fields[k] = required.includes(k) ? f : T.Optional(f);
  }
  return T.Object(fields);
}

export default async function chrollo(pi) {
  // installed twice (the pi package and `chrollo install pi`): the first copy loaded does it all
  if (globalThis.__chrolloPiLoaded) return;
  globalThis.__chrolloPiLoaded = true;
  const told = new Set();
  pi.on("before_agent_start", async (event, ctx) => {
    // A run an extension started with a message (pi >= 1.2: messageType "custom") has no
    // prompt to recall for; its turn is captured from the session file, labelled by its
    // message's customType (chrollo/harness/pi.py).
    if (event && event.messageType === "custom") return;
    if (!findChrollo()) {   // never break the prompt: say once per session how to install chrollo
      const sid = ctx && ctx.sessionManager ? ctx.sessionManager.getSessionId() : "";
      if (!told.has(sid)) {
        told.add(sid);
        if (ctx && ctx.hasUI) ctx.ui.notify(HOW_TO_INSTALL, "warning");
        else process.stderr.write(HOW_TO_INSTALL + "\n");
      }
      return;
    }
    const out = await send("before_agent_start", ctx, {
      prompt: event.prompt, image_count: event.images ? event.images.length : 0,
    });
    if (!out.trim()) return;
    return { message: { customType: "chrollo-recall", content: out, display: false } };
  });
  pi.on("agent_end", async (event, ctx) => { await send("agent_end", ctx, { messages: event.messages }); });
  pi.on("session_shutdown", async (_event, ctx) => { await send("session_shutdown", ctx, {}); });

  const T = await typebox();
  pi.registerTool({
    name: "read_memory",
    label: "Read memory",
    description: DESCRIPTIONS.read_memory,
    parameters: schema(T, {
      query: { type: "string", description: "A few distinctive words or exact identifiers to look for." },
      limit: { type: "integer", description: "Most hits to return (1-50, default 10)." },
    }, ["query"]),
    async execute(_id, params) {
      const args = ["search", "--compact"];
      if (params.limit) args.push("--limit", String(params.limit));
      return tool([...args, "--", ...String(params.query || "").split(/\s+/).filter(Boolean)]);
    },
  });
  pi.registerTool({
    name: "read_memory_file",
    label: "Read memory file",
    description: DESCRIPTIONS.read_memory_file,
    parameters: schema(T, {
      path: { type: "string", description: "The file, as the hit shows it." },
      line: { type: "integer", description: "The line to read around." },
      before: { type: "integer", description: "Lines before `line` (default 3)." },
      after: { type: "integer", description: "Lines after `line` (default 20)." },
    }, ["path", "line"]),
    async execute(_id, params) {
      return tool(["read", `${params.path}:${params.line}`, "-B", String(params.before ?? 3),
                   "-A", String(params.after ?? 20)]);
    },
  });
}
