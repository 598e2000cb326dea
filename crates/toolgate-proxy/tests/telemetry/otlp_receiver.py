"""An OTLP/HTTP receiver for the telemetry tests, built on the official
protobuf definitions (the `opentelemetry-proto` package).

It listens on 127.0.0.1 (a free port, printed first as `{"port": N}`),
decodes every `POST /v1/traces` and `POST /v1/metrics` body as the OTLP
export request it must be, and prints one JSON line per span and per
metric (ids as hex, attributes as plain values), plus each raw body as
`{"raw": ...}` (Latin-1 text) so the test can look for values that must
never be sent. A body that does not decode is answered 400 and printed as
`{"error": ...}`. It stops when its standard input closes.
"""

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

LOCK = threading.Lock()


def emit(obj):
    with LOCK:
        sys.stdout.write(json.dumps(obj, sort_keys=True) + "\n")
        sys.stdout.flush()


def value_of(any_value):
    kind = any_value.WhichOneof("value")
    if kind is None:
        return None
    v = getattr(any_value, kind)
    if kind in ("array_value", "kvlist_value", "bytes_value"):
        return str(v)
    return v


def attributes(kvs):
    return {kv.key: value_of(kv.value) for kv in kvs}


def spans(body):
    req = trace_service_pb2.ExportTraceServiceRequest()
    req.ParseFromString(body)
    for rs in req.resource_spans:
        resource = attributes(rs.resource.attributes)
        for ss in rs.scope_spans:
            for s in ss.spans:
                emit(
                    {
                        "span": s.name,
                        "trace_id": s.trace_id.hex(),
                        "span_id": s.span_id.hex(),
                        "parent_span_id": s.parent_span_id.hex(),
                        "kind": s.kind,
                        "status": s.status.code,
                        "attributes": attributes(s.attributes),
                        "service": resource.get("service.name"),
                    }
                )
    return trace_service_pb2.ExportTraceServiceResponse()


def metrics(body):
    req = metrics_service_pb2.ExportMetricsServiceRequest()
    req.ParseFromString(body)
    for rm in req.resource_metrics:
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                emit({"metric": m.name, "type": m.WhichOneof("data")})
    return metrics_service_pb2.ExportMetricsServiceResponse()


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        body = self.rfile.read(length)
        emit({"raw": body.decode("latin-1"), "path": self.path})
        handlers = {"/v1/traces": spans, "/v1/metrics": metrics}
        handler = handlers.get(self.path)
        if handler is None or self.headers.get("content-type") != "application/x-protobuf":
            emit({"error": "unexpected request", "path": self.path})
            self.send_response(404)
            self.end_headers()
            return
        try:
            answer = handler(body).SerializeToString()
        except DecodeError as e:
            emit({"error": str(e), "path": self.path})
            self.send_response(400)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    emit({"port": server.server_address[1]})
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
