//! A scripted host on 127.0.0.1 for the forge tests: each route (method and path, and the
//! query when one is given) answers with its scripted answers in turn (the last one again once
//! they run out), every request is recorded, and a request without the right token header is
//! refused with the host's own 401 — so the client is tested over real HTTP, as a host sees it.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::Value;

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    pub fn json(status: u16, body: Value) -> Answer {
        Answer {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.to_string(),
        }
    }

    pub fn text(status: u16, body: &str) -> Answer {
        Answer {
            status,
            headers: vec![("content-type".into(), "text/plain".into())],
            body: body.to_string(),
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Answer {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }
}

/// A request as the host saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

struct Route {
    method: String,
    path: String,
    query: Option<String>,
    /// Answered without the token (a signed storage address).
    open: bool,
    answers: VecDeque<Answer>,
}

struct Token {
    header: String,
    value: String,
    refusal: Answer,
}

#[derive(Default)]
struct State {
    routes: Vec<Route>,
    seen: Vec<Seen>,
    token: Option<Token>,
}

pub struct Host {
    /// `http://127.0.0.1:PORT`, no trailing slash.
    pub url: String,
    pub port: u16,
    state: Arc<Mutex<State>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Host {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Host {
    /// A host that wants `header: value` on every request, and answers `refusal` without it.
    pub async fn start(header: &str, value: &str, refusal: Answer) -> Host {
        let state = Arc::new(Mutex::new(State {
            token: Some(Token {
                header: header.to_string(),
                value: value.to_string(),
                refusal,
            }),
            ..State::default()
        }));
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .expect("bind 127.0.0.1");
        let port = listener.local_addr().expect("address").port();
        let shared = state.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let state = shared.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |request| answer(request, state.clone()));
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Host {
            url: format!("http://127.0.0.1:{port}"),
            port,
            state,
            task,
        }
    }

    /// Answers `method target` (`/path` or `/path?query`) with `answers`, in turn.
    pub fn route(&self, method: &str, target: &str, answers: Vec<Answer>) {
        self.add(method, target, answers, false);
    }

    /// Like [`Host::route`], without the token.
    pub fn open_route(&self, method: &str, target: &str, answers: Vec<Answer>) {
        self.add(method, target, answers, true);
    }

    fn add(&self, method: &str, target: &str, answers: Vec<Answer>, open: bool) {
        let (path, query) = match target.split_once('?') {
            Some((p, q)) => (p.to_string(), Some(q.to_string())),
            None => (target.to_string(), None),
        };
        let mut state = self.lock();
        // A route scripted again replaces the earlier script.
        state
            .routes
            .retain(|r| !(r.method == method && r.path == path && r.query == query));
        state.routes.push(Route {
            method: method.to_string(),
            path,
            query,
            open,
            answers: answers.into(),
        });
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.lock().seen.clone()
    }

    /// The requests to `path`, in order.
    pub fn seen_at(&self, method: &str, path: &str) -> Vec<Seen> {
        self.seen()
            .into_iter()
            .filter(|s| s.method == method && s.path == path)
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

async fn answer(
    request: Request<Incoming>,
    state: Arc<Mutex<State>>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let method = request.method().to_string();
    let path = request.uri().path().to_string();
    let query = request.uri().query().map(str::to_string);
    let headers: Vec<(String, String)> = request
        .headers()
        .iter()
        .map(|(n, v)| {
            (
                n.as_str().to_string(),
                v.to_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let bytes = request
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let seen = Seen {
        method: method.clone(),
        path: path.clone(),
        query: query.clone(),
        headers,
        body,
    };
    let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
    let authorised = state
        .token
        .as_ref()
        .is_none_or(|t| seen.header(&t.header) == Some(t.value.as_str()));
    state.seen.push(seen);
    let route = state
        .routes
        .iter_mut()
        .find(|r| r.method == method && r.path == path && (r.query.is_none() || r.query == query));
    let scripted = match route {
        Some(route) if !authorised && !route.open => None,
        Some(route) => {
            let next = if route.answers.len() > 1 {
                route.answers.pop_front()
            } else {
                route.answers.front().cloned()
            };
            Some(next.unwrap_or_else(|| Answer::text(500, "no answer scripted")))
        }
        None if authorised => Some(Answer::json(
            404,
            serde_json::json!({"message": "404 Not Found"}),
        )),
        None => None,
    };
    let answer = match scripted {
        Some(answer) => answer,
        None => state
            .token
            .as_ref()
            .map(|t| t.refusal.clone())
            .unwrap_or_else(|| Answer::text(401, "unauthorised")),
    };
    drop(state);
    let mut response = Response::builder().status(answer.status);
    for (name, value) in &answer.headers {
        response = response.header(name.as_str(), value.as_str());
    }
    Ok(response
        .body(Full::new(Bytes::from(answer.body)))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::from_static(b"bad script")))))
}
