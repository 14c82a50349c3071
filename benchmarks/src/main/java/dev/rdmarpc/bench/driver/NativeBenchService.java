package dev.rdmarpc.bench.driver;

import dev.rdmarpc.bench.proto.BenchRequest;
import dev.rdmarpc.bench.proto.BenchResponse;
import dev.rdmarpc.bench.proto.BenchServiceRpc;
import dev.rdmarpc.core.StreamObserver;

/** The benchmark service on rdmarpc's native API (generated {@code BenchServiceRpc}). */
final class NativeBenchService extends BenchServiceRpc.BenchServiceImplBase {
    private final int maxMessage;

    /** A service refusing server streams of messages above {@code maxMessage} bytes. */
    NativeBenchService(int maxMessage) {
        this.maxMessage = maxMessage;
    }

    @Override
    public void unary(BenchRequest request, StreamObserver<BenchResponse> responseObserver) {
        responseObserver.onNext(BenchResponse.newBuilder().setPayload(request.getPayload()).build());
        responseObserver.onCompleted();
    }

    @Override
    public void serverStream(BenchRequest request, StreamObserver<BenchResponse> responseObserver) {
        String bad = Payloads.checkStreamRequest(request.getResponseSize(), request.getResponseCount(), maxMessage);
        if (bad != null) {
            responseObserver.onError(dev.rdmarpc.core.Status.INVALID_ARGUMENT.withDescription(bad).asException());
            return;
        }
        BenchResponse response = BenchResponse.newBuilder().setPayload(Payloads.of(request.getResponseSize())).build();
        for (int i = 0; i < request.getResponseCount(); i++) {
            responseObserver.onNext(response);
        }
        responseObserver.onCompleted();
    }

    @Override
    public StreamObserver<BenchRequest> bidi(StreamObserver<BenchResponse> responseObserver) {
        return new StreamObserver<>() {
            @Override
            public void onNext(BenchRequest value) {
                responseObserver.onNext(BenchResponse.newBuilder().setPayload(value.getPayload()).build());
            }

            @Override
            public void onError(Throwable t) {
                // the client went away; nothing to clean up
            }

            @Override
            public void onCompleted() {
                responseObserver.onCompleted();
            }
        };
    }
}
