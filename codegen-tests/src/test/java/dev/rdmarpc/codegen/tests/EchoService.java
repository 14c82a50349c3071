package dev.rdmarpc.codegen.tests;

import com.google.protobuf.Empty;
import dev.rdmarpc.codegen.tests.common.CommonTypes.Envelope;
import dev.rdmarpc.codegen.tests.common.CommonTypes.Payload;
import dev.rdmarpc.codegen.tests.echo.EchoRequest;
import dev.rdmarpc.codegen.tests.echo.EchoResponse;
import dev.rdmarpc.codegen.tests.echo.EchoRpc;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StreamObserver;

import java.util.concurrent.atomic.AtomicInteger;

/** The test implementation of {@code Echo}; leaves NotImplemented and NotImplementedBidi to the base class. */
final class EchoService extends EchoRpc.EchoImplBase {
    /** Requests counted by the {@code default} rpc. */
    final AtomicInteger defaultRequests = new AtomicInteger();

    private static boolean failed(EchoRequest request, StreamObserver<?> responseObserver) {
        if (request.getFailWithCode() != 0) {
            responseObserver.onError(Status.fromCodeValue(request.getFailWithCode())
                    .withDescription("asked to fail: " + request.getText()).asException());
            return true;
        }
        return false;
    }

    @Override
    public void unary(EchoRequest request, StreamObserver<EchoResponse> responseObserver) {
        if (failed(request, responseObserver)) {
            return;
        }
        responseObserver.onNext(EchoResponse.newBuilder().setText(request.getText()).build());
        responseObserver.onCompleted();
    }

    @Override
    public void serverStream(EchoRequest request, StreamObserver<EchoResponse> responseObserver) {
        for (int i = 0; i < request.getCount(); i++) {
            responseObserver.onNext(EchoResponse.newBuilder().setText(request.getText()).setIndex(i).build());
        }
        if (!failed(request, responseObserver)) {
            responseObserver.onCompleted();
        }
    }

    @Override
    public StreamObserver<EchoRequest> clientStream(StreamObserver<EchoResponse> responseObserver) {
        return new StreamObserver<>() {
            private final StringBuilder joined = new StringBuilder();
            private int count;

            @Override
            public void onNext(EchoRequest value) {
                joined.append(value.getText());
                count++;
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onCompleted() {
                responseObserver.onNext(EchoResponse.newBuilder().setText(joined.toString()).setIndex(count).build());
                responseObserver.onCompleted();
            }
        };
    }

    @Override
    public StreamObserver<EchoRequest> bidiStream(StreamObserver<EchoResponse> responseObserver) {
        return new StreamObserver<>() {
            private int index;

            @Override
            public void onNext(EchoRequest value) {
                responseObserver.onNext(EchoResponse.newBuilder().setText(value.getText().toUpperCase()).setIndex(index++).build());
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onCompleted() {
                responseObserver.onCompleted();
            }
        };
    }

    @Override
    public void batchPut(Payload request, StreamObserver<Payload> responseObserver) {
        responseObserver.onNext(request.toBuilder().setN(request.getN() + 1).build());
        responseObserver.onCompleted();
    }

    @Override
    public void getAllHeaders(Envelope request, StreamObserver<Envelope.Header> responseObserver) {
        request.getHeadersList().forEach(responseObserver::onNext);
        responseObserver.onCompleted();
    }

    @Override
    public void import_(Empty request, StreamObserver<Empty> responseObserver) {
        responseObserver.onNext(Empty.getDefaultInstance());
        responseObserver.onCompleted();
    }

    @Override
    public StreamObserver<EchoRequest> default_(StreamObserver<Empty> responseObserver) {
        return new StreamObserver<>() {
            @Override
            public void onNext(EchoRequest value) {
                defaultRequests.incrementAndGet();
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onCompleted() {
                responseObserver.onNext(Empty.getDefaultInstance());
                responseObserver.onCompleted();
            }
        };
    }
}
