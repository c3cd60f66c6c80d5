use super::*;

fn failed(code: i32) -> ExitInfo {
    ExitInfo {
        code: Some(code),
        ..ExitInfo::default()
    }
}

fn typed(error_type: &str, message: &str) -> Evidence {
    Evidence {
        error_type: Some(error_type.to_string()),
        message: message.to_string(),
        stack: None,
    }
}

fn untyped(message: &str) -> Evidence {
    Evidence {
        error_type: None,
        message: message.to_string(),
        stack: None,
    }
}

fn class_of(error_type: &str, message: &str) -> FailureClass {
    let e = typed(error_type, message);
    classify(&failed(1), Some(&e), &format!("{error_type}: {message}"))
}

use FailureClass::*;

#[test]
fn our_own_timeout_is_timeout_whatever_the_output_says() {
    let exit = ExitInfo {
        signal: Some(9),
        timed_out: true,
        ..ExitInfo::default()
    };
    let e = typed("ConnectionRefusedError", "[Errno 111] Connection refused");
    assert_eq!(classify(&exit, Some(&e), ""), Timeout);
}

#[test]
fn a_program_that_could_not_start_is_environment() {
    let exit = ExitInfo {
        spawn_failed: true,
        ..ExitInfo::default()
    };
    assert_eq!(classify(&exit, None, ""), Environment);
}

#[test]
fn death_by_a_signal_or_its_shell_exit_code_is_resource() {
    let killed = ExitInfo {
        signal: Some(9),
        ..ExitInfo::default()
    };
    assert_eq!(classify(&killed, None, ""), Resource);
    for code in [137, 139, 134] {
        assert_eq!(classify(&failed(code), None, ""), Resource, "{code}");
    }
    assert_eq!(classify(&failed(130), None, ""), Unknown);
}

#[test]
fn running_out_of_memory_is_resource() {
    assert_eq!(class_of("MemoryError", ""), Resource);
    let node = "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory";
    assert_eq!(classify(&failed(1), Some(&untyped(node)), node), Resource);
}

#[test]
fn a_shell_reporting_a_killed_job_is_resource_but_a_log_saying_killed_is_not() {
    let report = "main.sh: line 2: 14417 Killed                  python3 big.py";
    assert_eq!(
        classify(&failed(1), Some(&untyped(report)), report),
        Resource
    );
    assert_eq!(classify(&failed(1), None, "Killed\n"), Resource);
    // A script's own log line that names no failure leaves the cause unclear.
    let log = "Killed 3 stale workers";
    assert_eq!(classify(&failed(1), Some(&untyped(log)), log), Unknown);
}

#[test]
fn missing_modules_and_commands_are_environment() {
    assert_eq!(
        class_of("ModuleNotFoundError", "No module named 'requests'"),
        Environment
    );
    assert_eq!(
        class_of("ImportError", "No module named 'yaml'"),
        Environment
    );
    assert_eq!(
        class_of("Error", "Cannot find module 'left-pad'"),
        Environment
    );
    assert_eq!(
        class_of("CommandNotFound", "jq: command not found"),
        Environment
    );
    assert_eq!(classify(&failed(127), None, ""), Environment);
}

#[test]
fn an_import_of_a_name_that_is_not_there_is_logic() {
    assert_eq!(
        class_of("ImportError", "cannot import name 'nosuch' from 'os'"),
        Logic
    );
}

#[test]
fn permissions_are_environment_and_a_full_disk_is_resource() {
    assert_eq!(
        class_of("PermissionError", "[Errno 13] Permission denied: '/etc/x'"),
        Environment
    );
    assert_eq!(
        class_of("Error", "EACCES: permission denied, open '/x'"),
        Environment
    );
    // More disk fixes a full one (docs/classes.md).
    assert_eq!(
        class_of("OSError", "[Errno 28] No space left on device"),
        Resource
    );
    assert_eq!(
        class_of("Error", "ENOSPC: no space left on device, write"),
        Resource
    );
}

#[test]
fn a_missing_input_file_is_environment() {
    // The machine must get the file; no change to the code brings it (docs/classes.md).
    assert_eq!(
        class_of(
            "FileNotFoundError",
            "[Errno 2] No such file or directory: 'data.csv'"
        ),
        Environment
    );
    assert_eq!(
        class_of("NoSuchFile", "cat: data.csv: No such file or directory"),
        Environment
    );
}

#[test]
fn network_failures_are_transient() {
    for (t, m) in [
        ("ConnectionRefusedError", "[Errno 111] Connection refused"),
        (
            "ConnectionResetError",
            "[Errno 104] Connection reset by peer",
        ),
        (
            "requests.exceptions.ConnectionError",
            "HTTPConnectionPool(host='x', port=80)",
        ),
        (
            "urllib.error.URLError",
            "<urlopen error [Errno -3] Temporary failure in name resolution>",
        ),
        ("socket.gaierror", "[Errno -2] Name or service not known"),
        ("socket.timeout", "timed out"),
        ("TimeoutError", "The read operation timed out"),
        (
            "requests.exceptions.ReadTimeout",
            "HTTPSConnectionPool: Read timed out.",
        ),
        ("requests.exceptions.ConnectTimeout", "connect timeout"),
        ("Error", "getaddrinfo ENOTFOUND api.example.com"),
        ("Error", "getaddrinfo EAI_AGAIN api.example.com"),
        ("Error", "connect ECONNREFUSED 127.0.0.1:5432"),
        ("Error", "read ECONNRESET"),
        ("Error", "write EPIPE"),
        ("Error", "connect ETIMEDOUT 10.0.0.1:443"),
    ] {
        assert_eq!(class_of(t, m), Transient, "{t}: {m}");
    }
}

#[test]
fn http_429_and_5xx_are_transient_401_and_403_environment_other_4xx_logic() {
    for (t, m) in [
        (
            "urllib.error.HTTPError",
            "HTTP Error 503: Service Unavailable",
        ),
        (
            "urllib.error.HTTPError",
            "HTTP Error 429: Too Many Requests",
        ),
        (
            "requests.exceptions.HTTPError",
            "502 Server Error: Bad Gateway for url: https://x/",
        ),
        ("AxiosError", "Request failed with status code 500"),
        ("Error", "upstream answered status 502"),
        ("HTTPError", "500"),
    ] {
        assert_eq!(class_of(t, m), Transient, "{t}: {m}");
    }
    let curl = "curl: (22) The requested URL returned error: 503";
    assert_eq!(classify(&failed(22), Some(&untyped(curl)), curl), Transient);
    for (t, m) in [
        (
            "requests.exceptions.HTTPError",
            "401 Client Error: Unauthorized for url: https://x/",
        ),
        ("urllib.error.HTTPError", "HTTP Error 403: Forbidden"),
        ("AxiosError", "Request failed with status code 401"),
    ] {
        assert_eq!(class_of(t, m), Environment, "{t}: {m}");
    }
    for (t, m) in [
        ("urllib.error.HTTPError", "HTTP Error 404: Not Found"),
        ("AxiosError", "Request failed with status code 400"),
        ("Error", "status 5000 rows imported"),
    ] {
        assert_eq!(class_of(t, m), Logic, "{t}: {m}");
    }
}

#[test]
fn an_exception_in_the_scripts_own_code_is_logic() {
    for t in [
        "KeyError",
        "TypeError",
        "ValueError",
        "json.decoder.JSONDecodeError",
        "AssertionError",
        "ValidationError",
    ] {
        assert_eq!(class_of(t, "x"), Logic, "{t}");
    }
}

#[test]
fn a_wrapped_network_cause_in_the_raw_output_makes_it_transient() {
    let output = "TypeError: fetch failed\n    at node:internal/deps/undici/undici:14976:13 {\n  \
            [cause]: Error: connect ECONNREFUSED 127.0.0.1:36945\n      at TCPConnectWrap.afterConnect \
            (node:net:1611:16) {\n    code: 'ECONNREFUSED'\n  }\n}\n";
    let e = typed("TypeError", "fetch failed");
    assert_eq!(classify(&failed(1), Some(&e), output), Transient);
}

#[test]
fn the_evidence_is_believed_before_earlier_noise_in_the_output() {
    let output = "warning: HTTP Error 503, retrying\nTraceback (most recent call last):\n  \
            File \"main.py\", line 1, in <module>\nModuleNotFoundError: No module named 'yaml'\n";
    let e = typed("ModuleNotFoundError", "No module named 'yaml'");
    assert_eq!(classify(&failed(1), Some(&e), output), Environment);
}

#[test]
fn a_traceback_cut_before_its_last_line_is_read_from_the_raw_output() {
    let output =
        "Traceback (most recent call last):\n  File \"main.py\", line 3\n… 9000 bytes cut …\n\
            socket.gaierror: [Errno -3] Temporary failure in name resolution\n";
    assert_eq!(classify(&failed(1), None, output), Transient);
}

#[test]
fn a_failed_exit_with_only_a_message_is_logic_and_with_nothing_is_unknown() {
    let e = untyped("fatal: config has no 'targets'");
    assert_eq!(
        classify(&failed(2), Some(&e), "fatal: config has no 'targets'"),
        Logic
    );
    assert_eq!(classify(&failed(1), None, ""), Unknown);
    assert_eq!(classify(&failed(1), None, "  \n"), Unknown);
    assert_eq!(classify(&failed(0), Some(&e), ""), Unknown);
}

#[test]
fn a_log_field_named_timeout_is_not_an_exception() {
    let output = "Timeout: 30s\nerror: the result had no rows\n";
    assert_eq!(
        classify(
            &failed(1),
            Some(&untyped("error: the result had no rows")),
            output
        ),
        Logic
    );
}

#[test]
fn codes_count_only_as_whole_words() {
    assert!(TextShows::read("connect ECONNREFUSED 1.2.3.4").transient);
    assert!(TextShows::read("EPIPE").transient);
    assert!(!TextShows::read("MY_EPERM_FLAG set").environment);
    assert!(!TextShows::read("recipepipe").transient);
}

#[test]
fn odd_text_does_not_panic() {
    for text in [
        "status ",
        "http",
        "\u{fffd}\u{0}Killed",
        ": line 12",
        "é: line 3: 4é Killed",
        "status 5é",
    ] {
        let _ = classify(&failed(1), Some(&untyped(text)), text);
    }
}

/// Real messages of real libraries: the status names the class by what fixes it, in whichever
/// shape the library says it and wherever it is (the last line, a wrapper's words).
#[test]
fn an_http_status_names_the_class_wherever_and_however_a_library_says_it() {
    let environment = [
        // Python: requests, httpx, urllib, aiohttp, google-api-python-client, google-cloud,
        // boto3, the OpenAI SDK.
        "requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url: https://api.example.com/v1/orders",
        "RuntimeError: sync failed: 403 Client Error: Forbidden for url: https://api.example.com/v1",
        "httpx.HTTPStatusError: Client error '403 Forbidden' for url 'https://api.example.com/v1'\nFor more information check: https://developer.mozilla.org/en-US/docs/Web/HTTP/Status/403",
        "urllib.error.HTTPError: HTTP Error 401: Unauthorized",
        "aiohttp.client_exceptions.ClientResponseError: 401, message='Unauthorized', url=URL('https://api.example.com/v1')",
        "googleapiclient.errors.HttpError: <HttpError 403 when requesting https://sheets.googleapis.com/v4/spreadsheets/x?alt=json returned \"The caller does not have permission\". Details: \"The caller does not have permission\">",
        "google.api_core.exceptions.Forbidden: 403 GET https://storage.googleapis.com/storage/v1/b/reports/o/x.csv: user does not have storage.objects.get access",
        "botocore.exceptions.ClientError: An error occurred (403) when calling the HeadObject operation: Forbidden",
        "openai.AuthenticationError: Error code: 401 - {'error': {'message': 'Incorrect API key provided', 'type': 'invalid_request_error'}}",
        // Node: axios, got, a fetch wrapper, Octokit's dump.
        "AxiosError: Request failed with status code 403",
        "HTTPError: Response code 401 (Unauthorized)",
        "Error: 401 Unauthorized",
        "HttpError: Bad credentials\n    at /app/node_modules/@octokit/request/dist-node/index.js:86:21 {\n  status: 401,",
        "npm error code E401\nnpm error Unable to authenticate, need: Basic realm=\"GitHub Package Registry\"",
        // Go, Rust, .NET, Java, Ruby, PHP.
        "googleapi: Error 403: The caller does not have permission, forbidden",
        "oauth2: cannot fetch token: 401 Unauthorized\nResponse: {\"error\":\"invalid_client\"}",
        "Error: HTTP status client error (401 Unauthorized) for url (https://api.example.com/v1)",
        "System.Net.Http.HttpRequestException: Response status code does not indicate success: 401 (Unauthorized).",
        "org.springframework.web.client.HttpClientErrorException$Forbidden: 403 Forbidden: [no body]",
        "Faraday::UnauthorizedError: the server responded with status 401",
        "GuzzleHttp\\Exception\\ClientException: Client error: `GET https://api.example.com/v1` resulted in a `401 Unauthorized` response",
        // Shell: curl, wget, git.
        "curl: (22) The requested URL returned error: 401",
        "HTTP request sent, awaiting response... 403 Forbidden\n2026-11-28 07:00:01 ERROR 403: Forbidden.",
        "fatal: unable to access 'https://example.com/repo.git/': The requested URL returned error: 403",
        "Proxy returned HTTP/1.1 407 Proxy Authentication Required",
    ];
    for text in environment {
        assert_eq!(
            classify(&failed(1), Some(&untyped(text)), text),
            Environment,
            "{text}"
        );
    }
    let transient = [
        "requests.exceptions.RetryError: HTTPSConnectionPool(host='api.example.com', port=443): Max retries exceeded with url: /v1 (Caused by ResponseError('too many 503 error responses'))",
        "urllib3.exceptions.MaxRetryError: HTTPSConnectionPool(host='api.example.com', port=443): Max retries exceeded with url: /v1 (Caused by ResponseError('too many 429 error responses'))",
        "requests.exceptions.HTTPError: 502 Server Error: Bad Gateway for url: https://api.example.com/v1",
        "httpx.HTTPStatusError: Server error '504 Gateway Timeout' for url 'https://api.example.com/v1'",
        "urllib.error.HTTPError: HTTP Error 503: Service Unavailable",
        "aiohttp.client_exceptions.ClientResponseError: 500, message='Internal Server Error', url=URL('https://api.example.com/v1')",
        "googleapiclient.errors.HttpError: <HttpError 503 when requesting https://www.googleapis.com/drive/v3/files?alt=json returned \"The service is currently unavailable.\">",
        "google.api_core.exceptions.ServiceUnavailable: 503 POST https://bigquery.googleapis.com/bigquery/v2/projects/x/jobs: Backend Error",
        "anthropic.InternalServerError: Error code: 529 - {'type': 'error', 'error': {'type': 'overloaded_error', 'message': 'Overloaded'}}",
        "AxiosError: Request failed with status code 429",
        "Error: HTTP 502",
        "Error: HTTP error! status: 500",
        "HTTPError: Response code 503 (Service Unavailable)",
        "APIError: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}",
        "InternalServerError: 500 The server had an error while processing your request.",
        "unexpected status code: 503",
        "googleapi: got HTTP response code 502 with body: <html>",
        "operation error S3: GetObject, https response error StatusCode: 503, RequestID: 7TQ3, api error SlowDown: Please reduce your request rate.",
        "java.io.IOException: Server returned HTTP response code: 500 for URL: https://api.example.com/v1",
        "System.Net.WebException: The remote server returned an error: (503) Server Unavailable.",
        "curl: (22) The requested URL returned error: 500",
        "ERROR 503: Service Unavailable.",
        "error: RPC failed; HTTP 500 curl 22 The requested URL returned error: 500",
        // GitHub refuses a rate limit with 403: waiting fixes it.
        "HTTP 403: API rate limit exceeded for user ID 1. (https://api.github.com/user/repos)",
    ];
    for text in transient {
        assert_eq!(
            classify(&failed(1), Some(&untyped(text)), text),
            Transient,
            "{text}"
        );
    }
    // A number that is not said as a status, another 4xx, a number in the code's own
    // exception: neither class.
    for text in [
        "error: 500 records failed validation",
        "ValueError: 503 is not a valid port",
        "KeyError: 500",
        "imported 401 rows, skipped 503",
        "urllib.error.HTTPError: HTTP Error 404: Not Found",
        "requests.exceptions.HTTPError: 422 Client Error: Unprocessable Entity for url: https://x/",
        "version 1.503 of the schema is not supported",
        "took 503ms, expected at most 100",
    ] {
        let class = classify(&failed(1), Some(&untyped(text)), text);
        assert!(
            !matches!(class, Environment | Transient),
            "{text}: {class:?}"
        );
    }
}

/// A status a script's own words put after a verb of the request, the way scripts word it.
#[test]
fn a_status_at_the_end_of_a_scripts_own_words_is_read() {
    for (text, class) in [
        ("Error: fetch failed: 503", Transient),
        ("AssertionError: expected 200, got 503", Transient),
        (
            "Error: the orders API returned 502 for GET /v1/orders",
            Transient,
        ),
        ("RuntimeError: the server responded with 429", Transient),
        ("Error: Unexpected response 504", Transient),
        ("Error: API error 503 while fetching /v1/orders", Transient),
        ("Error: upload failed with 401", Environment),
        ("SystemExit: token refresh answered 403", Environment),
    ] {
        assert_eq!(
            classify(&failed(1), Some(&untyped(text)), text),
            class,
            "{text}"
        );
    }
    // The status ends its line, above the frames a traceback prints under its message.
    let traceback = "Traceback (most recent call last):\n  File \"main.py\", line 16, in <module>\n    assert resp.status == 200, f\"health check: expected 200, got {resp.status}\"\nAssertionError: health check: expected 200, got 504\n";
    let e = crate::failure::parse_evidence(traceback, "", "main.py");
    assert_eq!(classify(&failed(1), e.as_ref(), traceback), Transient);
    for text in [
        "ValueError: got 500 rows, expected 10",
        "error: import failed: 503 rows rejected",
        "I forgot 503 things",
    ] {
        let class = classify(&failed(1), Some(&untyped(text)), text);
        assert!(
            !matches!(class, Environment | Transient),
            "{text}: {class:?}"
        );
    }
}

/// A script's output is untrusted and may be one line of megabytes crafted so that every
/// number on it looks like a status: reading it costs time in proportion to its size. With a
/// look-around that grew with the line this took hours; the bound is orders of magnitude
/// above what a linear read needs, even in a debug build.
#[test]
fn one_long_crafted_line_of_statuses_is_read_in_linear_time() {
    for line in [
        format!("rate limit {}", "401 unauthorized ".repeat(60_000)),
        "KeyErrorcodee401.".repeat(60_000),
    ] {
        let started = std::time::Instant::now();
        let _ = classify(&failed(1), None, &line);
        let took = started.elapsed();
        assert!(
            took < std::time::Duration::from_secs(60),
            "{} bytes took {took:?}",
            line.len()
        );
    }
}
