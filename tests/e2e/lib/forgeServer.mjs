// A git host on 127.0.0.1 for the pull-request story: the repositories under `root` served over
// HTTP by git's own `git http-backend` (as a CGI program), and GitHub's REST API for them as its
// documentation describes it — create a pull request (201), read it, and the checks of a commit
// (none has run yet). What was asked is kept for the story to look at.

import { execFileSync, spawn } from "node:child_process";
import http from "node:http";

const gitExecPath = () => execFileSync("git", ["--exec-path"], { encoding: "utf8" }).trim();

export async function startForge(root) {
  const seen = [];
  const backend = `${gitExecPath()}/git-http-backend`;
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const url = new URL(req.url, "http://127.0.0.1");
      if (url.pathname.startsWith("/api/v3/")) {
        let json = null;
        try {
          json = body.length ? JSON.parse(body.toString("utf8")) : null;
        } catch {
          json = null;
        }
        seen.push({ method: req.method, path: url.pathname, authorization: req.headers.authorization ?? null, body: json });
        const send = (status, value) => {
          res.writeHead(status, { "content-type": "application/json" });
          res.end(JSON.stringify(value));
        };
        const pull = (head) => ({
          number: 7,
          html_url: "https://github.example/ada/greeter/pull/7",
          state: "open",
          merged_at: null,
          head: { ref: head, sha: "0".repeat(40) },
        });
        if (req.method === "POST" && url.pathname === "/api/v3/repos/ada/greeter/pulls") return send(201, pull(json?.head ?? ""));
        if (req.method === "GET" && url.pathname === "/api/v3/repos/ada/greeter/pulls") return send(200, []);
        if (req.method === "GET" && url.pathname === "/api/v3/repos/ada/greeter/pulls/7") return send(200, pull("healer/t"));
        if (/\/commits\/[0-9a-f]+\/check-runs$/.test(url.pathname)) return send(200, { total_count: 0, check_runs: [] });
        if (/\/commits\/[0-9a-f]+\/status$/.test(url.pathname)) return send(200, { state: "pending", statuses: [] });
        return send(404, { message: "Not Found" });
      }
      // git's smart HTTP, through git's own CGI program.
      const cgi = spawn(backend, [], {
        env: {
          ...process.env,
          GIT_PROJECT_ROOT: root,
          GIT_HTTP_EXPORT_ALL: "1",
          GIT_HTTP_RECEIVE_PACK: "true",
          REMOTE_USER: "ada",
          REQUEST_METHOD: req.method,
          PATH_INFO: decodeURIComponent(url.pathname),
          QUERY_STRING: url.search.replace(/^\?/, ""),
          CONTENT_TYPE: req.headers["content-type"] ?? "",
          CONTENT_LENGTH: String(body.length),
          HTTP_CONTENT_ENCODING: req.headers["content-encoding"] ?? "",
          GIT_CONFIG_NOSYSTEM: "1",
        },
      });
      const out = [];
      cgi.stdout.on("data", (c) => out.push(c));
      cgi.on("close", () => {
        const all = Buffer.concat(out);
        const split = all.indexOf("\r\n\r\n") >= 0 ? all.indexOf("\r\n\r\n") : all.indexOf("\n\n");
        const gap = all.indexOf("\r\n\r\n") >= 0 ? 4 : 2;
        const head = all.subarray(0, split).toString("utf8");
        let status = 200;
        const headers = {};
        for (const line of head.split(/\r?\n/)) {
          const [name, ...rest] = line.split(":");
          const value = rest.join(":").trim();
          if (/^status$/i.test(name)) status = parseInt(value, 10) || 200;
          else if (name) headers[name] = value;
        }
        res.writeHead(status, headers);
        res.end(all.subarray(split + gap));
      });
      // git may answer (a GET of refs, an error) before it read what was sent: not an error here.
      cgi.stdin.on("error", () => {});
      cgi.stdin.end(body);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = server.address().port;
  return {
    url: `http://127.0.0.1:${port}`,
    api: `http://127.0.0.1:${port}/api/v3`,
    seen,
    close: () => new Promise((r) => server.close(r)),
  };
}
