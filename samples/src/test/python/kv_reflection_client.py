"""A server reflection client in Python, as grpcurl-like tools use reflection: asks the rdmarpc KV sample server for
its services (grpc.reflection.v1), fetches the .proto files of the KeyValue service by symbol, builds message classes
from those descriptors alone and calls Put with them.

Usage: kv_reflection_client.py PORT. Prints "ok: CHECK" per passed check; exits non-zero with the reason on the first
failure. The reflection messages are encoded by hand (kv_grpcio_client's helpers), the file descriptors are parsed
with protobuf's descriptor_pb2, so nothing but grpcio and protobuf (Debian: python3-grpcio, python3-protobuf) is needed.
"""
import sys

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from kv_grpcio_client import check, field_bytes, parse, raw

REFLECTION = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"
KEY_VALUE = "rdmarpc.samples.kv.KeyValue"


def message_class(descriptor):
    """The message class of a descriptor, on protobuf 4.21 (Debian 12) and later."""
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(descriptor)
    return message_factory.MessageFactory(descriptor.file.pool).GetPrototype(descriptor)


def add_files(pool, files):
    """Adds each FileDescriptorProto once its dependencies are in the pool."""
    pending = {f.name: f for f in files}
    while pending:
        ready = [f for f in pending.values() if all(d not in pending for d in f.dependency)]
        if not ready:
            check(False, "the files' dependencies are among them: " + ", ".join(pending))
        for f in ready:
            pool.Add(f)
            del pending[f.name]


def main():
    port = int(sys.argv[1])
    with grpc.insecure_channel("127.0.0.1:%d" % port) as ch:
        info = ch.stream_stream(REFLECTION, request_serializer=raw, response_deserializer=raw)
        answers = list(info(iter([
            field_bytes(7, b""),                              # list_services
            field_bytes(4, KEY_VALUE.encode()),               # file_containing_symbol
            field_bytes(4, b"rdmarpc.samples.kv.NoSuch"),     # an unknown symbol
        ]), timeout=60))
        check(len(answers) == 3, "one answer per request")

        listed = parse(answers[0])[6][0]
        names = {parse(s)[1][0].decode() for s in parse(listed).get(1, [])}
        check({KEY_VALUE, "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection"} <= names,
              "list_services names the KV, health and reflection services: %s" % sorted(names))

        files = [descriptor_pb2.FileDescriptorProto.FromString(b) for b in parse(parse(answers[1])[4][0])[1]]
        pool = descriptor_pool.DescriptorPool()
        add_files(pool, files)
        put = pool.FindServiceByName(KEY_VALUE).FindMethodByName("Put")
        check(put.input_type.full_name == "rdmarpc.samples.kv.PutRequest", "Put's input type resolved by symbol")

        error = parse(parse(answers[2])[7][0])
        check(error[1][0] == 5, "an unknown symbol is NOT_FOUND (code 5)")

        request_class, response_class = message_class(put.input_type), message_class(put.output_type)
        call = ch.unary_unary("/%s/%s" % (KEY_VALUE, put.name), request_serializer=request_class.SerializeToString,
                              response_deserializer=response_class.FromString)
        response = call(request_class(key=b"reflected", value=b"v"), timeout=60)
        check(response.version == 1, "Put called with message classes built from the reflected descriptors")
    print("all checks passed", flush=True)


if __name__ == "__main__":
    main()
