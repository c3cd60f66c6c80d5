//! A git server on 127.0.0.1 as a forge runs one: git's own `git http-backend`, run as a CGI
//! for each request, serving the bare repositories in a folder over git's smart HTTP protocol
//! (fetch and push). It can ask for a Basic login as a forge does (401 with `WWW-Authenticate`),
//! so a push exercises git's real credential handling, and it records every request it saw.
//!
//! It runs on a thread and runtime of its own, so sync and async tests can use it; it stops
//! when dropped.

#![allow(dead_code)]

use std::convert::Infallible;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

/// A request as the server answered it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    /// Path and query, as sent.
    pub target: String,
    pub status: u16,
    /// It carried an Authorization header (right or wrong).
    pub signed_in: bool,
    /// Its body came in chunks (git sends a large pack so).
    pub chunked: bool,
}

struct Setup {
    root: PathBuf,
    /// The `Authorization` header value that is let in, and the user it names.
    login: Option<(String, String)>,
    seen: Mutex<Vec<Seen>>,
}

pub struct GitHttp {
    base: String,
    setup: Arc<Setup>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl GitHttp {
    /// Serves the bare repositories in `root` (`root/<name>`) to anyone, pushes included.
    pub fn serve(root: &Path) -> GitHttp {
        GitHttp::start(root, None)
    }

    /// Serves `root` only to `user` with `password` (HTTP Basic); any other request is
    /// answered 401 with `WWW-Authenticate: Basic realm="git"`.
    pub fn serve_with_login(root: &Path, user: &str, password: &str) -> GitHttp {
        let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        GitHttp::start(root, Some((format!("Basic {token}"), user.to_string())))
    }

    fn start(root: &Path, login: Option<(String, String)>) -> GitHttp {
        let setup = Arc::new(Setup {
            root: root.to_path_buf(),
            login,
            seen: Mutex::new(Vec::new()),
        });
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (ready, addr) = std::sync::mpsc::channel();
        let shared = setup.clone();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("server runtime");
            runtime.block_on(async move {
                let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
                ready
                    .send(listener.local_addr().expect("addr"))
                    .expect("ready");
                let serve = async {
                    loop {
                        let Ok((stream, _)) = listener.accept().await else {
                            continue;
                        };
                        let setup = shared.clone();
                        tokio::spawn(async move {
                            let service = service_fn(move |request| {
                                let setup = setup.clone();
                                async move { Ok::<_, Infallible>(answer(request, &setup).await) }
                            });
                            let _ = http1::Builder::new()
                                .serve_connection(TokioIo::new(stream), service)
                                .await;
                        });
                    }
                };
                tokio::select! {
                    _ = serve => {}
                    _ = stopped => {}
                }
            });
        });
        let addr = addr.recv().expect("server started");
        GitHttp {
            base: format!("http://{addr}"),
            setup,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// The address of the bare repository `root/<repo_name>`.
    pub fn url(&self, repo_name: &str) -> String {
        format!("{}/{repo_name}", self.base)
    }

    /// `http://127.0.0.1:<port>`: what a credential is stored for.
    pub fn origin(&self) -> String {
        self.base.clone()
    }

    /// Every request answered so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.setup
            .seen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl Drop for GitHttp {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn answer(request: Request<Incoming>, setup: &Setup) -> Response<Full<Bytes>> {
    let method = request.method().to_string();
    let target = request
        .uri()
        .path_and_query()
        .map(|p| p.to_string())
        .unwrap_or_default();
    let header = |name: &str| {
        request
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    };
    let authorization = header("authorization");
    let signed_in = !authorization.is_empty();
    let chunked = header("transfer-encoding").contains("chunked");
    let record = |status: u16| {
        setup
            .seen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Seen {
                method: method.clone(),
                target: target.clone(),
                status,
                signed_in,
                chunked,
            });
    };
    let user = match &setup.login {
        Some((expected, user)) if authorization == *expected => Some(user.clone()),
        Some(_) => {
            record(401);
            return Response::builder()
                .status(StatusCode::UNAUTHORIZED)
                .header("WWW-Authenticate", "Basic realm=\"git\"")
                .header("Content-Type", "text/plain")
                .body(Full::new(Bytes::from_static(b"sign in first\n")))
                .expect("response");
        }
        None => None,
    };
    let cgi = Cgi {
        method: method.clone(),
        path: request.uri().path().to_string(),
        query: request.uri().query().unwrap_or("").to_string(),
        content_type: header("content-type"),
        encoding: header("content-encoding"),
        protocol: header("git-protocol"),
        user,
    };
    // hyper has undone a chunked body already; the CGI gets it whole, with its length.
    let body = match request.into_body().collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => Bytes::new(),
    };
    let response = run_backend(&setup.root, cgi, body).await;
    record(response.status().as_u16());
    response
}

struct Cgi {
    method: String,
    path: String,
    query: String,
    content_type: String,
    encoding: String,
    protocol: String,
    user: Option<String>,
}

/// One request through `git http-backend`, its CGI headers (`Status:` among them) made the
/// response's.
async fn run_backend(root: &Path, cgi: Cgi, body: Bytes) -> Response<Full<Bytes>> {
    let mut cmd = tokio::process::Command::new("git");
    cmd.arg("http-backend")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env("GIT_PROJECT_ROOT", root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        // Pushes are served without touching the bare repositories' own config.
        .env("GIT_CONFIG_COUNT", "1")
        .env("GIT_CONFIG_KEY_0", "http.receivepack")
        .env("GIT_CONFIG_VALUE_0", "true")
        .env("GATEWAY_INTERFACE", "CGI/1.1")
        .env("SERVER_PROTOCOL", "HTTP/1.1")
        .env("REQUEST_METHOD", &cgi.method)
        .env("PATH_INFO", &cgi.path)
        .env("QUERY_STRING", &cgi.query)
        .env("CONTENT_TYPE", &cgi.content_type)
        .env("CONTENT_LENGTH", body.len().to_string())
        .env("REMOTE_ADDR", "127.0.0.1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if !cgi.encoding.is_empty() {
        cmd.env("HTTP_CONTENT_ENCODING", &cgi.encoding);
    }
    if !cgi.protocol.is_empty() {
        cmd.env("GIT_PROTOCOL", &cgi.protocol);
    }
    if let Some(user) = &cgi.user {
        cmd.env("REMOTE_USER", user);
    }
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => return plain(500, format!("git http-backend did not start: {e}")),
    };
    // Written while the output is read, so that neither side waits on a full pipe.
    let writer = child.stdin.take().map(|mut stdin| {
        tokio::spawn(async move {
            let _ = stdin.write_all(&body).await;
            let _ = stdin.shutdown().await;
        })
    });
    let output = match child.wait_with_output().await {
        Ok(output) => output,
        Err(e) => return plain(500, format!("git http-backend failed: {e}")),
    };
    if let Some(writer) = writer {
        let _ = writer.await;
    }
    parse_cgi(&output.stdout).unwrap_or_else(|| {
        plain(
            500,
            format!(
                "git http-backend gave no answer: {}",
                String::from_utf8_lossy(&output.stderr)
            ),
        )
    })
}

/// A CGI's output (headers, a blank line, the body) as an HTTP response.
fn parse_cgi(out: &[u8]) -> Option<Response<Full<Bytes>>> {
    let (head, body) = [&b"\r\n\r\n"[..], b"\n\n"]
        .iter()
        .filter_map(|sep| {
            out.windows(sep.len())
                .position(|w| w == *sep)
                .map(|at| (at, sep.len()))
        })
        .min()
        .map(|(at, len)| (&out[..at], &out[at + len..]))?;
    let mut response = Response::builder();
    let mut status = 200;
    for line in String::from_utf8_lossy(head).lines() {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("status") {
            status = value
                .split_whitespace()
                .next()
                .and_then(|code| code.parse().ok())
                .unwrap_or(500);
        } else {
            response = response.header(name.trim(), value);
        }
    }
    response
        .status(status)
        .body(Full::new(Bytes::copy_from_slice(body)))
        .ok()
}

fn plain(status: u16, text: String) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("Content-Type", "text/plain")
        .body(Full::new(Bytes::from(text)))
        .expect("response")
}
