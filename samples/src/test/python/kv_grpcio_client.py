"""A Python grpcio client of the rdmarpc KV sample server: a gRPC client not written in Java.

Usage: kv_grpcio_client.py PORT. Prints "ok: CHECK" per passed check; exits non-zero with the reason on the first
failure. The messages are encoded by hand (a few protobuf fields), so nothing but grpcio is needed.
"""
import sys
import threading

import grpc

KV = "/rdmarpc.samples.kv.KeyValue/"
HEALTH = "/grpc.health.v1.Health/"
MAX = 64 << 20


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_bytes(number, value):
    return varint(number << 3 | 2) + varint(len(value)) + value


def field_varint(number, value):
    return varint(number << 3) + varint(value)


def parse(data):
    """Field number -> list of values (bytes for length-delimited, int for varints)."""
    fields, i = {}, 0
    while i < len(data):
        key, i = read_varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = read_varint(data, i)
        elif wire == 2:
            length, i = read_varint(data, i)
            value, i = data[i:i + length], i + length
        else:
            raise ValueError("unexpected wire type %d" % wire)
        fields.setdefault(number, []).append(value)
    return fields


def read_varint(data, i):
    shift = result = 0
    while True:
        b = data[i]
        i += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, i
        shift += 7


def raw(b):
    return b


def check(condition, what):
    if not condition:
        print("FAILED: " + what, flush=True)
        sys.exit(1)
    print("ok: " + what, flush=True)


def main():
    port = int(sys.argv[1])
    options = [("grpc.max_receive_message_length", MAX), ("grpc.max_send_message_length", MAX)]
    with grpc.insecure_channel("127.0.0.1:%d" % port, options=options) as ch:
        put = ch.unary_unary(KV + "Put", request_serializer=raw, response_deserializer=raw)
        get = ch.unary_unary(KV + "Get", request_serializer=raw, response_deserializer=raw)
        scan = ch.unary_stream(KV + "Scan", request_serializer=raw, response_deserializer=raw)
        watch = ch.stream_stream(KV + "Watch", request_serializer=raw, response_deserializer=raw)
        health = ch.unary_unary(HEALTH + "Check", request_serializer=raw, response_deserializer=raw)

        reply = put(field_bytes(1, b"py") + field_bytes(2, b"thon"), timeout=60)
        check(parse(reply).get(1) == [1], "unary Put answers version 1")
        reply = get(field_bytes(1, b"py"), timeout=60)
        check(parse(reply).get(1) == [b"thon"], "unary Get returns the value")

        for i in range(5):
            put(field_bytes(1, b"s%d" % i) + field_bytes(2, b"v%d" % i), timeout=60)
        keys = [parse(m)[1][0] for m in scan(field_bytes(1, b"s") + field_bytes(2, b"t"), timeout=60)]
        check(keys == [b"s0", b"s1", b"s2", b"s3", b"s4"], "server streaming Scan returns the keys in order")

        try:
            get(field_bytes(1, b"missing"), timeout=60)
            check(False, "Get of a missing key fails")
        except grpc.RpcError as e:
            check(e.code() == grpc.StatusCode.NOT_FOUND and e.details() == "no key missing",
                  "an error status with details: %s %r" % (e.code(), e.details()))

        done = threading.Event()

        def watch_requests():  # one prefix, then the request stream stays open until the call has ended
            yield field_bytes(1, b"w")
            done.wait()

        try:
            for _ in watch(watch_requests(), timeout=0.3):
                pass
            check(False, "Watch past its deadline fails")
        except grpc.RpcError as e:
            check(e.code() == grpc.StatusCode.DEADLINE_EXCEEDED, "deadline exceeded: %s" % e.code())
        finally:
            done.set()

        trace = bytes([0, 1, 2, 255])
        _, call = put.with_call(field_bytes(1, b"m"), timeout=60,
                                metadata=[("x-request-id", "py-7"), ("x-trace-bin", trace)])
        initial = dict(call.initial_metadata())
        trailing = dict(call.trailing_metadata())
        check(initial.get("x-request-id") == "py-7" and trailing.get("x-trace-bin") == trace,
              "metadata both ways (ASCII header echoed as a header, binary as a trailer)")

        big = bytes(range(256)) * (4 << 12)
        put(field_bytes(1, b"big") + field_bytes(2, big), timeout=60)
        check(parse(get(field_bytes(1, b"big"), timeout=60))[1] == [big], "a 4 MiB value both ways")

        reply = health(b"", timeout=60)
        check(parse(reply).get(1) == [1], "health Check: SERVING")
    print("all checks passed", flush=True)


if __name__ == "__main__":
    main()
