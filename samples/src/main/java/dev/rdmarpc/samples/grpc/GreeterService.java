package dev.rdmarpc.samples.grpc;

import dev.rdmarpc.samples.grpc.greeter.GreeterGrpc;
import dev.rdmarpc.samples.grpc.greeter.HelloReply;
import dev.rdmarpc.samples.grpc.greeter.HelloRequest;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;

/** A stock grpc-java service implementation: nothing in it knows about rdmarpc. */
public final class GreeterService extends GreeterGrpc.GreeterImplBase {
    @Override
    public void sayHello(HelloRequest request, StreamObserver<HelloReply> responseObserver) {
        responseObserver.onNext(HelloReply.newBuilder().setMessage("Hello " + request.getName()).build());
        responseObserver.onCompleted();
    }

    @Override
    public void sayHelloAgain(HelloRequest request, StreamObserver<HelloReply> responseObserver) {
        if (request.getTimes() < 0 || request.getTimes() > 1000) {
            responseObserver.onError(Status.INVALID_ARGUMENT.withDescription("times must be 0..1000").asRuntimeException());
            return;
        }
        for (int i = 1; i <= request.getTimes(); i++) {
            responseObserver.onNext(HelloReply.newBuilder().setMessage("Hello again (" + i + ") " + request.getName()).build());
        }
        responseObserver.onCompleted();
    }
}
