//! Figure for the signature (printed, not asserted): throughput of normalising and signing a
//! large log, target ≥ 100 MB/s in release.
//!
//! The log is 64 MiB (67 MB) of realistic failure output: Python tracebacks (with standard-library
//! frames and caret lines), Node uncaught errors (with `node:internal` frames), bash errors and
//! log lines, each with its own paths, temp dirs, timestamps, UUIDs, hex ids, PIDs, durations,
//! IPs and counts. Each round normalises the whole log as one piece of evidence's stack (what
//! `Failure::new` does) and signs it; the median of the rounds is printed.
//!
//! `cargo bench -p healer --bench signature` (or `make bench`; `HEALER_BENCH_QUICK=1`: a 1 MiB
//! log, one round).

#[path = "figures.rs"]
mod figures;

use std::hint::black_box;
use std::time::{Duration, Instant};

use figures::{Figures, Goal};
use healer::failure::{normalize, sign, Evidence};

const FIGURE: &str = "normalise + sign a large log";

fn main() {
    let figures = Figures::new("signature", &[FIGURE.to_string()]);
    let log_bytes = figures::size(64, 1) * 1024 * 1024;
    let rounds = figures::size(7, 1);
    let log = build_log(log_bytes);
    let mb = log.len() as f64 / 1e6;
    let evidence = Evidence {
        error_type: Some("KeyError".to_string()),
        message: "'total'".to_string(),
        stack: Some(log),
    };

    // One warm-up round, which also shows how much the text shrinks.
    let normalized = normalize(&evidence);
    println!(
        "Signature figures: a {mb:.1} MB log normalises to {:.1} MB ({} lines), signature {}",
        normalized.len() as f64 / 1e6,
        normalized.lines().count(),
        sign(&normalized)
    );

    let mut times: Vec<Duration> = (0..rounds)
        .map(|_| {
            let start = Instant::now();
            let signature = sign(&normalize(black_box(&evidence)));
            black_box(signature);
            start.elapsed()
        })
        .collect();
    times.sort();
    let median = times.get(rounds / 2).copied().unwrap_or_default();
    let best = times.first().copied().unwrap_or_default();
    let rate = |d: Duration| mb / d.as_secs_f64().max(1e-9);
    println!(
        "normalise + sign: median of {rounds} rounds {:.0} ms, best {:.0} MB/s",
        median.as_secs_f64() * 1e3,
        rate(best)
    );
    figures.report(FIGURE, rate(median), "MB/s", Goal::AtLeast(100.0));
}

/// A small deterministic generator, so that every run builds the same log.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn hex(&mut self, len: usize) -> String {
        (0..len)
            .map(|_| char::from(b"0123456789abcdef"[(self.next() % 16) as usize]))
            .collect()
    }

    fn word(&mut self, len: usize) -> String {
        (0..len)
            .map(|_| char::from(b'a' + (self.next() % 26) as u8))
            .collect()
    }

    fn uuid(&mut self) -> String {
        format!(
            "{}-{}-{}-{}-{}",
            self.hex(8),
            self.hex(4),
            self.hex(4),
            self.hex(4),
            self.hex(12)
        )
    }

    fn stamp(&mut self) -> String {
        format!(
            "2024-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            1 + self.below(12),
            1 + self.below(28),
            self.below(24),
            self.below(60),
            self.below(60),
            self.below(1000)
        )
    }

    fn dir(&mut self) -> String {
        match self.below(3) {
            0 => format!("/tmp/tmp{}", self.word(8)),
            1 => format!("/home/{}/projects/{}", self.word(5), self.word(7)),
            _ => format!(
                "/var/folders/{}/{}/T/run-{}",
                self.word(2),
                self.hex(12),
                self.below(99999)
            ),
        }
    }
}

fn build_log(size: usize) -> String {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut log = String::with_capacity(size + 4096);
    while log.len() < size {
        let piece = match rng.below(4) {
            0 => python_traceback(&mut rng),
            1 => node_error(&mut rng),
            2 => bash_error(&mut rng),
            _ => log_lines(&mut rng),
        };
        log.push_str(&piece);
    }
    log
}

fn python_traceback(rng: &mut Rng) -> String {
    let dir = rng.dir();
    let key = ["total", "amount", "user_id", "created_at"][rng.below(4) as usize];
    format!(
        "{stamp} INFO worker[{pid}] loading {n} rows from {dir}/data_{id}.json (request {uuid})\n\
         Traceback (most recent call last):\n  \
         File \"{dir}/main.py\", line {l1}, in <module>\n    main()\n  \
         File \"{dir}/main.py\", line {l2}, in main\n    rows = load(path)\n           ^^^^^^^^^^\n  \
         File \"{dir}/lib/load.py\", line {l3}, in load\n    return [row['{key}'] for row in json.loads(text)]\n  \
         File \"/usr/lib/python3.11/json/__init__.py\", line 346, in loads\n    return _default_decoder.decode(s)\n  \
         File \"/usr/lib/python3.11/json/decoder.py\", line 337, in decode\n    obj, end = self.raw_decode(s, idx=_w(s, 0).end())\n\
         KeyError: '{key}' (object at 0x{addr}, took {ms}ms, {size} bytes read)\n",
        stamp = rng.stamp(),
        pid = 1000 + rng.below(60000),
        n = rng.below(1_000_000),
        id = rng.below(10_000),
        uuid = rng.uuid(),
        l1 = 1 + rng.below(300),
        l2 = 1 + rng.below(300),
        l3 = 1 + rng.below(300),
        addr = rng.hex(12),
        ms = rng.below(10_000),
        size = rng.below(1 << 30),
    )
}

fn node_error(rng: &mut Rng) -> String {
    let dir = rng.dir();
    let prop = ["x", "length", "map", "id"][rng.below(4) as usize];
    format!(
        "{dir}/main.js:{l1}\n  return o.{prop}.y;\n             ^\n\n\
         TypeError: Cannot read properties of undefined (reading '{prop}')\n    \
         at load ({dir}/main.js:{l1}:{c1})\n    \
         at Object.<anonymous> ({dir}/main.js:{l2}:{c2})\n    \
         at Module._compile (node:internal/modules/cjs/loader:1364:14)\n    \
         at Module._extensions..js (node:internal/modules/cjs/loader:1422:10)\n    \
         at node:internal/main/run_main_module:28:49\n\nNode.js v20.{minor}.2\n\
         [{stamp}] request {uuid} from {a}.{b}.{c}.{d}:{port} failed after {secs}.{frac}s (trace {trace})\n",
        l1 = 1 + rng.below(500),
        c1 = 1 + rng.below(80),
        l2 = 1 + rng.below(500),
        c2 = 1 + rng.below(80),
        minor = rng.below(30),
        stamp = rng.stamp(),
        uuid = rng.uuid(),
        a = rng.below(256),
        b = rng.below(256),
        c = rng.below(256),
        d = rng.below(256),
        port = 1024 + rng.below(60000),
        secs = rng.below(100),
        frac = rng.below(1000),
        trace = rng.hex(32),
    )
}

fn bash_error(rng: &mut Rng) -> String {
    let dir = rng.dir();
    format!(
        "{dir}/run.sh: line {line}: jq: command not found\n\
         curl: (7) Failed to connect to 10.0.{a}.{b} port {port} after {ms} ms: Connection refused\n\
         {stamp} job {job} (pid {pid}) exited with exit code 127, mailed ops-{n}@example.com\n",
        line = 1 + rng.below(200),
        a = rng.below(256),
        b = rng.below(256),
        port = 1024 + rng.below(60000),
        ms = rng.below(5000),
        stamp = rng.stamp(),
        job = rng.hex(10),
        pid = rng.below(99999),
        n = rng.below(100),
    )
}

fn log_lines(rng: &mut Rng) -> String {
    let mut out = String::new();
    for _ in 0..4 {
        out.push_str(&format!(
            "{stamp} WARN  [{thread}] GET https://api.example.com/v1/users/{user}/orders?page={page} \
             -> HTTP 503 Service Unavailable in {ms}ms (attempt {attempt}/5, retrying in {wait}s)\n",
            stamp = rng.stamp(),
            thread = rng.word(6),
            user = rng.below(1_000_000),
            page = rng.below(50),
            ms = rng.below(30_000),
            attempt = 1 + rng.below(5),
            wait = 1 + rng.below(60),
        ));
    }
    out
}
