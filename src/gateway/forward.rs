//! A worker's forwarder to the control room's model gateway (issue 42). The agent on a worker
//! is given `http://127.0.0.1:<port>/…` and its session's pass; the forwarder adds the
//! worker's own token (which the agent never sees) and passes the request on to the gateway's
//! listener for workers, streaming the answer back as it comes.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Limited, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::header::HeaderValue;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio_util::sync::CancellationToken;

use super::serve::{hop_by_hop, refuse, Body, X_HEALER_WORKER};
use crate::error::{Error, Result};
use crate::llm::ApiKey;

/// The largest request passed on (as the gateway itself).
const MAX_REQUEST: usize = 64 * 1024 * 1024;

struct Target {
    base: url::Url,
    token: ApiKey,
    client: reqwest::Client,
}

/// Start a forwarder on 127.0.0.1 to the gateway at `gateway` (its address for workers), with
/// this worker's `token`; it runs until `cancel`.
pub async fn forwarder(
    gateway: &str,
    token: ApiKey,
    cancel: CancellationToken,
) -> Result<SocketAddr> {
    let base = url::Url::parse(gateway).map_err(|e| {
        Error::InvalidInput(format!(
            "“{gateway}” is not the address of a model gateway (http://host:port): {e}"
        ))
    })?;
    if !matches!(base.scheme(), "http" | "https") || base.host_str().is_none() {
        return Err(Error::InvalidInput(format!(
            "“{gateway}” is not the address of a model gateway (http://host:port)"
        )));
    }
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(|e| Error::io("the worker's gateway forwarder could not listen", e))?;
    let addr = listener
        .local_addr()
        .map_err(|e| Error::io("the forwarder has no address", e))?;
    let target = Arc::new(Target {
        base,
        token,
        client: crate::llm::build_client().map_err(Error::from)?,
    });
    tokio::spawn(async move {
        loop {
            let accepted = tokio::select! {
                () = cancel.cancelled() => break,
                accepted = listener.accept() => accepted,
            };
            let Ok((stream, _)) = accepted else { continue };
            let target = target.clone();
            tokio::spawn(async move {
                let service = service_fn(move |request| {
                    let target = target.clone();
                    async move { Ok::<_, Infallible>(pass_on(&target, request).await) }
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok(addr)
}

async fn pass_on(target: &Target, request: Request<Incoming>) -> Response<Body> {
    let mut url = target.base.clone();
    let path = format!(
        "{}{}",
        target.base.path().trim_end_matches('/'),
        request.uri().path()
    );
    url.set_path(&path);
    url.set_query(request.uri().query());
    let method = request.method().clone();
    let mut headers = hyper::HeaderMap::new();
    for (name, value) in request.headers() {
        if !hop_by_hop(name) && name != hyper::header::HOST && name != X_HEALER_WORKER {
            headers.append(name.clone(), value.clone());
        }
    }
    if let Ok(mut value) = HeaderValue::from_str(target.token.expose()) {
        value.set_sensitive(true);
        headers.insert(X_HEALER_WORKER, value);
    }
    let body = match Limited::new(request.into_body(), MAX_REQUEST)
        .collect()
        .await
    {
        Ok(body) => body.to_bytes(),
        Err(_) => {
            return refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                "request_too_large",
                "the request is larger than Healer's model gateway passes (64 MB)",
            )
        }
    };
    let mut answer = match target
        .client
        .request(method, url.as_str())
        .headers(headers)
        .body(body)
        .send()
        .await
    {
        Ok(answer) => answer,
        Err(e) => {
            return refuse(
                StatusCode::BAD_GATEWAY,
                "api_error",
                &format!(
                    "The worker could not reach the control room's model gateway: {}",
                    crate::secrets::redact_owned(e.to_string())
                ),
            )
        }
    };
    let mut response = Response::builder().status(answer.status());
    for (name, value) in answer.headers() {
        if !hop_by_hop(name) {
            response = response.header(name, value);
        }
    }
    let (tx, rx) =
        tokio::sync::mpsc::channel::<std::result::Result<Frame<Bytes>, std::io::Error>>(8);
    tokio::spawn(async move {
        loop {
            match answer.chunk().await {
                Ok(Some(chunk)) => {
                    if tx.send(Ok(Frame::data(chunk))).await.is_err() {
                        break;
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    let _ = tx.send(Err(std::io::Error::other(e.to_string()))).await;
                    break;
                }
            }
        }
    });
    let frames = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|frame| (frame, rx))
    });
    response
        .body(StreamBody::new(frames).boxed_unsync())
        .unwrap_or_else(|e| refuse(StatusCode::BAD_GATEWAY, "api_error", &e.to_string()))
}
