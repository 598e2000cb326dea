"""An OTLP receiver for the telemetry tests, built on the official
protobuf definitions and their generated gRPC services (the
`opentelemetry-proto` package, with `grpcio` for `--grpc`).

It listens on 127.0.0.1 (a free port, printed first as `{"port": N}`):
over OTLP/HTTP by default, decoding every `POST /v1/traces` and
`POST /v1/metrics` body as the OTLP export request it must be; with
`--grpc`, as the OTLP/gRPC `TraceService` and `MetricsService`. It prints
one JSON line per span and per metric (ids as hex, attributes as plain
values, a gauge's or sum's points with their attributes), plus each raw
request as `{"raw": ...}` (Latin-1 text) so the test can look for values
that must never be sent. A body that does not decode is answered 400 and
printed as `{"error": ...}`. It stops when its standard input closes.
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
    return emit_spans(req)


def emit_spans(req):
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
                        "status_message": s.status.message,
                        "attributes": attributes(s.attributes),
                        "service": resource.get("service.name"),
                    }
                )
    return trace_service_pb2.ExportTraceServiceResponse()


def number(point):
    kind = point.WhichOneof("value")
    return None if kind is None else getattr(point, kind)


def metrics(body):
    req = metrics_service_pb2.ExportMetricsServiceRequest()
    req.ParseFromString(body)
    return emit_metrics(req)


def emit_metrics(req):
    for rm in req.resource_metrics:
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                kind = m.WhichOneof("data")
                line = {"metric": m.name, "type": kind}
                if kind in ("gauge", "sum"):
                    line["points"] = [
                        {"attributes": attributes(p.attributes), "value": number(p)}
                        for p in getattr(m, kind).data_points
                    ]
                emit(line)
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


def serve_grpc():
    from concurrent import futures

    import grpc
    from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2_grpc
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

    class Traces(trace_service_pb2_grpc.TraceServiceServicer):
        def Export(self, request, context):
            emit({"raw": request.SerializeToString().decode("latin-1"), "path": "grpc:traces"})
            return emit_spans(request)

    class Metrics(metrics_service_pb2_grpc.MetricsServiceServicer):
        def Export(self, request, context):
            emit({"raw": request.SerializeToString().decode("latin-1"), "path": "grpc:metrics"})
            return emit_metrics(request)

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Traces(), server)
    metrics_service_pb2_grpc.add_MetricsServiceServicer_to_server(Metrics(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    emit({"port": port})
    sys.stdin.read()
    server.stop(grace=1).wait()


def main():
    if "--grpc" in sys.argv[1:]:
        serve_grpc()
        return
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    emit({"port": server.server_address[1]})
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
