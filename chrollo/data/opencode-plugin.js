// chrollo for OpenCode (chrollo-opencode plugin v1): capture every turn and recall past ones.
// Zero logic here — two OpenCode plugin hooks each become one JSON object piped to
// `chrollo hook <event> --harness opencode`:
//   chat.message  (a prompt is about to run: its session id and text parts) — chrollo's
//                 stdout, if any, is added to the prompt as a synthetic text part (OpenCode
//                 stores it with synthetic: true; chrollo never captures it back);
//   session.idle  (the turn has ended) — chrollo reads the turn from OpenCode's database.
// Two ways in, one file:
//   `chrollo install opencode` writes it into ~/.config/opencode/plugin/chrollo.js with
//   chrollo's absolute path in CHROLLO; read_memory is chrollo's MCP server, which it
//   registers in opencode.json; `chrollo uninstall opencode` removes both.
//   chrollo's OpenCode package (`opencode plugin -g <clone>/hooks/opencode`) loads this file
//   as it is, from the clone (hooks/opencode/index.js re-exports it). CHROLLO unchanged, it
//   finds chrollo itself and is the package: chrollo runs with CHROLLO_VIA=package, so beside
//   `chrollo install opencode` its hooks stand down, and its config hook adds chrollo's MCP
//   server unless the config has one named chrollo already (read_memory offered once).
// Plain JavaScript with no imports but node's own: it needs no @opencode-ai/plugin.
import { spawn } from "node:child_process";
import { accessSync, constants, mkdirSync, writeFileSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import { homedir, tmpdir } from "node:os";

const CHROLLO = ["chrollo"];
// (`chrollo install opencode` always writes an absolute path above: unchanged, this is the package)
const VIA = CHROLLO[0] === "chrollo" ? "package" : "";
const TIMEOUT_MS = 5000;
const HOW_TO_INSTALL = "chrollo is not installed, so this session is not remembered. Install it with one of: " +
  "uv tool install . | pipx install . | pip install . in a clone of chrollo's repository, or uv tool install git+<its URL> (or set CHROLLO_BIN to its path); then run: chrollo doctor";

// The chrollo to run: $CHROLLO_BIN, the path `chrollo install opencode` wrote, `chrollo` on
// PATH, or ~/.local/bin/chrollo; null when there is none.
function findChrollo() {
  const runnable = (p) => { try { accessSync(p, constants.X_OK); return true; } catch { return false; } };
  if (process.env.CHROLLO_BIN) return runnable(process.env.CHROLLO_BIN) ? [process.env.CHROLLO_BIN] : null;
  if (CHROLLO[0] !== "chrollo") return runnable(CHROLLO[0]) ? CHROLLO : null;
  for (const dir of [...(process.env.PATH || "").split(delimiter), join(homedir(), ".local", "bin")]) {
    // (absolute entries only: a relative one is the folder OpenCode works in)
    if (isAbsolute(dir) && runnable(join(dir, "chrollo"))) return [join(dir, "chrollo")];
  }
  return null;
}

// chrollo's environment: the package says so (chrollo/packages.py: stands_down, mcp_stands_down).
function runEnv() {
  return VIA ? { ...process.env, CHROLLO_VIA: VIA, CHROLLO_HARNESS: "opencode" } : process.env;
}

// Whether to tell session `sid` how to install chrollo: once a session, kept where the packages'
// shim keeps it ($TMPDIR/chrollo-notice-<uid>/<session id>), so a session resumed by a new
// `opencode run` is not told again.
function firstTold(told, sid) {
  if (told.has(sid)) return false;
  told.add(sid);
  if (typeof sid !== "string" || !/^[A-Za-z0-9._-]{1,200}$/.test(sid) || !process.getuid) return true;
  try {
    const dir = join(tmpdir(), `chrollo-notice-${process.getuid()}`);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, sid), "", { flag: "wx" });
  } catch (e) {
    return !(e && e.code === "EEXIST");
  }
  return true;
}

// Run chrollo with `input` on stdin; its stdout ("" on any failure: never break the prompt).
function run(args, input) {
  return new Promise((done) => {
    const chrollo = findChrollo();
    if (!chrollo) return done("");
    let out = "", p;
    try {
      p = spawn(chrollo[0], [...chrollo.slice(1), ...args], { stdio: ["pipe", "pipe", "ignore"], env: runEnv() });
    } catch {
      return done("");
    }
    const timer = setTimeout(() => p.kill(), TIMEOUT_MS);
    p.stdout.on("data", (d) => (out += d));
    p.on("error", () => { clearTimeout(timer); done(""); });
    p.on("close", (code) => { clearTimeout(timer); done(code === 0 ? out : ""); });
    p.stdin.on("error", () => {});
    p.stdin.end(input);
  });
}

export const ChrolloPlugin = async (ctx) => {
  const cwd = (ctx && ctx.directory) || process.cwd();
  const told = new Set();
  const send = (event, extra) => run(["hook", event, "--harness", "opencode"], JSON.stringify({
    shim: "chrollo-opencode", shim_version: 1, harness: "opencode", hook_event_name: event, cwd,
    timestamp: new Date().toISOString(), ...extra,
  }));
  // The package's read_memory: chrollo's MCP server added to OpenCode's config as it loads,
  // unless one named chrollo is there already (`chrollo install opencode --mcp`'s).
  const config = async (cfg) => {
    try {
      const chrollo = findChrollo();
      if (!chrollo || !cfg || typeof cfg !== "object") return;
      if (!cfg.mcp || typeof cfg.mcp !== "object") cfg.mcp = {};
      if (cfg.mcp.chrollo) return;
      cfg.mcp.chrollo = { type: "local", command: [...chrollo, "mcp"], enabled: true,
                          environment: { CHROLLO_VIA: VIA, CHROLLO_HARNESS: "opencode" } };
    } catch {}
  };
  return {
    ...(VIA ? { config } : {}),
    "chat.message": async (input, output) => {
      try {
        const sid = input && input.sessionID;
        if (!findChrollo()) {   // say once per session how to install chrollo; the prompt runs on
          if (firstTold(told, sid)) process.stderr.write(HOW_TO_INSTALL + "\n");
          return;
        }
        const parts = (output && Array.isArray(output.parts) ? output.parts : [])
          .filter((p) => p && p.type === "text")
          .map((p) => ({ type: "text", text: p.text, synthetic: !!p.synthetic, ignored: !!p.ignored }));
        const out = await send("chat.message", {
          session_id: sid, message_id: output && output.message ? output.message.id : null, parts,
        });
        if (!out.trim() || !output || !output.message || !Array.isArray(output.parts)) return;
        const last = output.parts.length ? output.parts[output.parts.length - 1].id : "prt_";
        output.parts.push({ id: `${last}Chrollo`, sessionID: sid, messageID: output.message.id,
                            type: "text", text: out, synthetic: true });
      } catch {}
    },
    event: async ({ event }) => {
      try {
        if (event && event.type === "session.idle" && event.properties) {
          await send("session.idle", { session_id: event.properties.sessionID });
        }
      } catch {}
    },
  };
};
