//! [`OtlpReceiver`]: a real OTLP receiver for the telemetry tests, built on
//! the official protobuf definitions and their generated gRPC services
//! (Python's `opentelemetry-proto`, with `grpcio` for gRPC):
//! `otlp/otlp_receiver.py` beside this crate's manifest.

#![allow(
    clippy::panic,
    reason = "test support: a receiver that cannot start or speaks nonsense must fail the test, saying why"
)]

use std::ffi::OsString;
use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The Python that runs the receiver: `TOOLGATE_PROXY_PYTHON` (the test
/// environment `.ci/run` makes), else `python3`.
fn python() -> OsString {
    std::env::var_os("TOOLGATE_PROXY_PYTHON").unwrap_or_else(|| "python3".into())
}

/// Which OTLP transport the receiver speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OtlpTransport {
    /// OTLP/HTTP with protobuf bodies (`/v1/traces`, `/v1/metrics`).
    Http,
    /// OTLP/gRPC (`TraceService/Export`, `MetricsService/Export`).
    Grpc,
}

/// A running receiver and the JSON lines it prints: one per span
/// (`span`, `trace_id`, `span_id`, `parent_span_id`, `kind`, `status`,
/// `status_message`, `attributes`, `service`), one per metric (`metric`,
/// `type`, and for a gauge or a sum its `points`), one per request
/// (`raw`: the body as Latin-1 text) and `error` for a body that did not
/// decode. Dropping it stops the receiver.
#[derive(Debug)]
pub struct OtlpReceiver {
    child: Child,
    lines: mpsc::Receiver<Value>,
    port: u16,
}

impl OtlpReceiver {
    /// Starts a receiver, or `None` after [`crate::skip`] (a failure
    /// where external tools are required) without a Python that has
    /// `opentelemetry-proto` (and `grpcio`, for gRPC).
    pub fn start(transport: OtlpTransport) -> Option<Self> {
        let probe = match transport {
            OtlpTransport::Http => {
                "import opentelemetry.proto.collector.trace.v1.trace_service_pb2"
            }
            OtlpTransport::Grpc => {
                "import grpc, opentelemetry.proto.collector.trace.v1.trace_service_pb2_grpc"
            }
        };
        let has = Command::new(python())
            .args(["-c", probe])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !has {
            crate::skip(
                "no Python with opentelemetry-proto and grpcio (TOOLGATE_PROXY_PYTHON; .ci/run installs them)",
            );
            return None;
        }
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/otlp/otlp_receiver.py");
        let mut command = Command::new(python());
        command.arg(script);
        if transport == OtlpTransport::Grpc {
            command.arg("--grpc");
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start the OTLP receiver: {e}"));
        let Some(stdout) = child.stdout.take() else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the OTLP receiver has no standard output");
        };
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value = serde_json::from_str::<Value>(&line)
                    .unwrap_or_else(|e| panic!("the receiver printed `{line}`: {e}"));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        let first = rx
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|e| panic!("the OTLP receiver did not say its port: {e}"));
        let port = first
            .get("port")
            .and_then(Value::as_u64)
            .and_then(|p| u16::try_from(p).ok())
            .unwrap_or_else(|| panic!("the OTLP receiver's first line: {first}"));
        Some(Self {
            child,
            lines: rx,
            port,
        })
    }

    /// The port it listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The `endpoint` for `[telemetry]`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Lines until `done` says the collection is complete, or 30 s pass
    /// (then what came, for the assertions to name what is missing).
    pub fn collect(&self, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut seen = Vec::new();
        while !done(&seen) {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(v) => seen.push(v),
                Err(_) => break,
            }
        }
        seen
    }
}

impl Drop for OtlpReceiver {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// The span lines among `lines`.
pub fn otlp_spans(lines: &[Value]) -> Vec<&Value> {
    lines.iter().filter(|l| l.get("span").is_some()).collect()
}
