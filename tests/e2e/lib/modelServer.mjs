// A scripted model provider on 127.0.0.1 for the end-to-end stories: it speaks the OpenAI chat
// completions wire format (one JSON document per answer, which the app's real client reads as
// a non-streaming server), so the app's own model client is exercised. The maintainer is sent an
// `eval` call first and then gives up with an explanation; the planner answers in one sentence;
// the recovery analyzer asks for diagnostics.

import { createServer } from "node:http";

export const GIVE_UP =
  "The shop's export no longer has an amount for each order; it has total instead. Tell me whether total is the same figure before I change the report.";
export const PLANNER_ANSWER = "Yes — tell me which column holds the amount now, and I will change the report.";

export const AGENT_SUMMARY = "greet() now says Hello, Ada! with a comma and an exclamation mark.";

/** How long the coding agent "thinks" before each answer, so the window shows the steps arrive. */
const AGENT_PAUSE_MS = 700;

/** The built-in agent's turns on the greeter repository, by how many tool results it has seen. */
const AGENT_TURNS = [
  { text: "Let me read the greeting first.", call: ["read_file", { path: "greet.py" }] },
  { text: "", call: ["edit_file", { path: "greet.py", search: "'Hi ' + name", replace: "'Hello, ' + name + '!'" }] },
  { text: "", call: ["run_command", { command: "python3 -c 'from greet import greet; print(greet(\"Ada\"))'" }] },
  { text: "", call: ["finish", { summary: AGENT_SUMMARY }] },
];

/** The person's comments on the agent's lines, and the agent's answer to them. */
export const COMMENT = "Use an f-string here.";
export const COMMENTED_SUMMARY = "greet() uses an f-string now.";
const COMMENT_TURNS = [
  { text: "I will answer the comment.", call: ["edit_file", { path: "greet.py", search: "'Hello, ' + name + '!'", replace: "f'Hello, {name}!'" }] },
  { text: "", call: ["finish", { summary: COMMENTED_SUMMARY }] },
];

/** A task whose agent waits (for a file named `go`), so that the steering judge has time to look. */
export const WAITING_TASK = "Wait for the go file";
export const STEER_MESSAGE = "Stop waiting for the file: edit greet.py so it says Hello, with a comma and an exclamation mark.";
const WAITING_TURNS = [
  { text: "I will wait for the file first.", call: ["run_command", { command: "while [ ! -e go ]; do sleep 0.2; done; echo went", timeout_secs: 600 }] },
  { text: "", call: ["finish", { summary: "The file came." }] },
];

/** A task whose agent wants to run a download piped into a shell: the approvals story sets the command. */
export const ASKING_TASK = "Install the helper";

export const ANALYSIS = { action: "diagnostics", reasoning: "The program report-tool is not installed on this machine." };

export async function startModelServer() {
  const seen = [];
  /** What the agent on ASKING_TASK wants to run (set by the story that uses it). */
  const asking = { command: "echo nothing to install" };
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      const json = body ? JSON.parse(body) : {};
      seen.push({ method: req.method, url: req.url, body: json });
      res.setHeader("content-type", "application/json");
      if (req.url === "/props" || req.url === "/api/show") {
        // What llama.cpp and Ollama say about themselves: this server is neither.
        res.statusCode = 404;
        res.end(JSON.stringify({ error: { message: `Invalid URL (${req.method} ${req.url})` } }));
        return;
      }
      if (req.method === "GET" && req.url.endsWith("/models")) {
        res.end(JSON.stringify({ object: "list", data: [{ id: "scripted-small", object: "model" }] }));
        return;
      }
      if (req.url.startsWith("/v1beta/")) {
        geminiTurn(req, res, json);
        return;
      }
      const messages = json.messages ?? [];
      const system = messages[0]?.content ?? "";
      if (String(req.headers["user-agent"] ?? "").startsWith("opencode/")) {
        opencodeTurn(res, json, messages);
        return;
      }
      // Usage as a provider counts it: about 4 characters a token of the request body, and of
      // what the answer writes.
      const tokens = (chars) => Math.ceil(chars / 4);
      const answer = (message, finish) => {
        const written = (message.content ?? "").length + (message.tool_calls ?? []).reduce((n, c) => n + c.function.arguments.length, 0);
        const usage = { prompt_tokens: tokens(Buffer.byteLength(body)), completion_tokens: Math.max(1, tokens(written)) };
        usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
        res.end(JSON.stringify({ id: "chatcmpl-e2e", object: "chat.completion", created: 1, model: "scripted-small", choices: [{ index: 0, message, finish_reason: finish }], usage }));
      };
      if (String(system).includes("steering judge")) {
        answer({ role: "assistant", content: JSON.stringify({ action: "steer", message: STEER_MESSAGE }) }, "stop");
      } else if (String(system).includes("Healer's coding agent")) {
        const seenResults = messages.filter((m) => m.role === "tool").length;
        const waiting = messages.some((m) => m.role === "user" && String(m.content).includes(WAITING_TASK));
        const askingTask = messages.some((m) => m.role === "user" && String(m.content).includes(ASKING_TASK));
        const askingTurns = [
          { text: "I will install the helper first.", call: ["run_command", { command: asking.command }] },
          { text: "", call: ["finish", { summary: "Went on as the person answered." }] },
        ];
        // Comments sent to the agent start its turns over from the message that carries them.
        const commentedAt = messages.findLastIndex((m) => m.role === "user" && String(m.content).includes("The person reviewed your change"));
        const sinceComments = messages.slice(commentedAt + 1).filter((m) => m.role === "tool").length;
        const turns = commentedAt >= 0 ? COMMENT_TURNS : askingTask ? askingTurns : waiting ? WAITING_TURNS : AGENT_TURNS;
        const at = commentedAt >= 0 ? sinceComments : seenResults;
        const turn = turns[Math.min(at, turns.length - 1)];
        const [name, args] = turn.call;
        setTimeout(
          () =>
            answer(
              {
                role: "assistant",
                content: turn.text || null,
                tool_calls: [{ id: `call_${seenResults + 1}`, type: "function", function: { name, arguments: JSON.stringify(args) } }],
              },
              "tool_calls",
            ),
          AGENT_PAUSE_MS,
        );
      } else if (String(system).includes("recovery analyzer")) {
        answer({ role: "assistant", content: JSON.stringify(ANALYSIS) }, "stop");
      } else if (String(system).includes("planner")) {
        answer({ role: "assistant", content: PLANNER_ANSWER }, "stop");
      } else if (!messages.some((m) => m.role === "tool")) {
        const code = "import json\nprint(sorted(json.load(open('orders.json'))[0]))\n";
        answer(
          { role: "assistant", content: "Let me look at what the data holds.", tool_calls: [{ id: "call_eval", type: "function", function: { name: "eval", arguments: JSON.stringify({ code }) } }] },
          "tool_calls",
        );
      } else {
        answer({ role: "assistant", content: GIVE_UP }, "stop");
      }
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}/v1`, seen, asking, close: () => new Promise((r) => server.close(r)) };
}

/** The worktree opencode works in, as its system prompt says it. */
function workingDirectory(messages) {
  const said = messages.map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content ?? ""))).join("\n");
  return said.match(/Working directory: (\S+)/)?.[1] ?? ".";
}

/**
 * opencode's turns, streamed as Chat Completions chunks (it always streams): look at greet.py,
 * try the network (a question for the person), read it, edit it, run it, then say it is done. Its title request (no tools) gets a title.
 */
function opencodeTurn(res, json, messages) {
  res.setHeader("content-type", "text/event-stream");
  const chunk = (delta, finish) =>
    res.write(`data: ${JSON.stringify({ id: "chatcmpl-oc", object: "chat.completion.chunk", created: 1, model: json.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
  const end = () => {
    res.write(`data: ${JSON.stringify({ id: "chatcmpl-oc", object: "chat.completion.chunk", created: 1, model: json.model, choices: [], usage: { prompt_tokens: 900, completion_tokens: 40, total_tokens: 940 } })}\n\n`);
    res.end("data: [DONE]\n\n");
  };
  if (!(json.tools ?? []).length) {
    chunk({ role: "assistant", content: "Greet properly" }, null);
    chunk({}, "stop");
    end();
    return;
  }
  const dir = workingDirectory(messages);
  const greet = `${dir}/greet.py`;
  const turns = [
    ["bash", { command: "python3 -c 'import greet; print(greet.greet(\"Ada\"))'", description: "Show the greeting now" }, "Let me see what it says now."],
    // Not among the project's commands: opencode asks, and the person answers in the window.
    ["bash", { command: "curl -s http://127.0.0.1:9/ || echo offline", description: "See whether the network is there" }, "Let me see whether the network is there."],
    ["read", { filePath: greet }, ""],
    ["edit", { filePath: greet, oldString: "'Hi ' + name", newString: "'Hello, ' + name + '!'" }, "It needs a comma and an exclamation mark."],
    ["bash", { command: "python3 -c 'import greet; print(greet.greet(\"Ada\"))'", description: "Check the greeting" }, ""],
  ];
  const done = messages.filter((m) => m.role === "tool").length;
  setTimeout(() => {
    if (done < turns.length) {
      const [name, args, said] = turns[done];
      if (said) chunk({ role: "assistant", content: said }, null);
      chunk({ role: "assistant", tool_calls: [{ index: 0, id: `call_${done + 1}`, type: "function", function: { name, arguments: JSON.stringify(args) } }] }, null);
      chunk({}, "tool_calls");
    } else {
      chunk({ role: "assistant", content: "greet() now says Hello, Ada! with a comma and an exclamation mark." }, null);
      chunk({}, "stop");
    }
    end();
  }, 1500);
}

/**
 * Gemini CLI's turns in Google's Gemini API (`:streamGenerateContent?alt=sse`, chunks of
 * candidates, the last with its finish reason and usage): run the greeting, replace the line,
 * say it is done. Its side requests (counting tokens, its JSON checks of who speaks next) are
 * answered without taking a turn.
 */
function geminiTurn(req, res, json) {
  if (req.url.includes(":countTokens")) {
    res.end(JSON.stringify({ totalTokens: Math.ceil(JSON.stringify(json).length / 4) }));
    return;
  }
  const usage = { promptTokenCount: 900, candidatesTokenCount: 40, totalTokenCount: 940 };
  const answer = (parts) => ({ candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }], usageMetadata: usage, modelVersion: "scripted" });
  const config = json.generationConfig ?? {};
  const streamed = req.url.includes("alt=sse");
  if (config.responseMimeType === "application/json" || config.responseJsonSchema || config.responseSchema) {
    const said = { next_speaker: "user", reasoning: "scripted", unproductive_state_confidence: 0, unproductive_state_analysis: "none" };
    const value = answer([{ text: JSON.stringify(said) }]);
    if (streamed) {
      res.setHeader("content-type", "text/event-stream");
      res.end(`data: ${JSON.stringify(value)}\n\n`);
    } else {
      res.end(JSON.stringify(value));
    }
    return;
  }
  const request = JSON.stringify(json);
  const dir = request.match(/working in the directory: ([^"\\]+)/)?.[1]?.trim() ?? ".";
  const turns = [
    ["run_shell_command", { command: "python3 -c 'import greet; print(greet.greet(\"Ada\"))'", description: "Show the greeting now" }, "Let me see what it says now."],
    ["replace", { file_path: `${dir}/greet.py`, old_string: "'Hi ' + name", new_string: "'Hello, ' + name + '!'", instruction: "Greet with a comma and an exclamation mark." }, "It needs a comma and an exclamation mark."],
  ];
  const done = (json.contents ?? []).flatMap((c) => c.parts ?? []).filter((p) => p.functionResponse).length;
  res.setHeader("content-type", "text/event-stream");
  setTimeout(() => {
    if (done < turns.length) {
      const [name, args, said] = turns[done];
      res.write(`data: ${JSON.stringify({ candidates: [{ content: { role: "model", parts: [{ text: said }] }, index: 0 }], modelVersion: "scripted" })}\n\n`);
      res.end(`data: ${JSON.stringify(answer([{ functionCall: { name, args } }]))}\n\n`);
    } else {
      res.end(`data: ${JSON.stringify(answer([{ text: "greet() now says Hello, Ada! with a comma and an exclamation mark." }]))}\n\n`);
    }
  }, 1500);
}
