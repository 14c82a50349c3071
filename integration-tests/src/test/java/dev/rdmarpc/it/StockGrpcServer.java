package dev.rdmarpc.it;

import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCredentials;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A stock grpc-java server ({@code NettyServerBuilder}) with {@link TestService}'s methods written against grpc-java's
 * own API (bytes in, bytes out), for rdmarpc clients that call standard gRPC servers. It counts the HTTP/2 connections
 * it took.
 */
final class StockGrpcServer implements AutoCloseable {
    static final Metadata.Key<String> ASCII = Metadata.Key.of("x-ascii", Metadata.ASCII_STRING_MARSHALLER);
    static final Metadata.Key<byte[]> BINARY = Metadata.Key.of("x-blob-bin", Metadata.BINARY_BYTE_MARSHALLER);
    /** The description THROW answers with: non-ASCII and a '%', which grpc-message percent-encodes. */
    static final String ERROR_DESCRIPTION = "nöt found: 100% — ✓";

    final Server server;
    /** Counted down when a HANG call is cancelled (by the client, or by its deadline). */
    final CountDownLatch hangCancelled = new CountDownLatch(1);
    /** The request metadata the last META call carried. */
    volatile Metadata lastHeaders;
    /** HTTP/2 connections the server took (its transport filter saw them ready). */
    final AtomicInteger connections = new AtomicInteger();

    StockGrpcServer(ServerCredentials creds, int maxInboundMessageSize) throws IOException {
        NettyServerBuilder b = creds == null ? NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                : NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0), creds);
        this.server = b.maxInboundMessageSize(maxInboundMessageSize)
                .addTransportFilter(new io.grpc.ServerTransportFilter() {
                    @Override
                    public io.grpc.Attributes transportReady(io.grpc.Attributes attrs) {
                        connections.incrementAndGet();
                        return attrs;
                    }
                })
                .intercept(new io.grpc.ServerInterceptor() {
                    @Override
                    public <ReqT, RespT> io.grpc.ServerCall.Listener<ReqT> interceptCall(io.grpc.ServerCall<ReqT, RespT> call,
                            Metadata headers, io.grpc.ServerCallHandler<ReqT, RespT> next) {
                        lastHeaders = headers;
                        if (call.getMethodDescriptor().getBareMethodName().equals("Hang")) {
                            // the call's context ends with its cancellation (by the client or the deadline), whether
                            // or not the handler has run yet
                            io.grpc.Context.current().addListener(c -> hangCancelled.countDown(), Runnable::run);
                        }
                        if (call.getMethodDescriptor().getBareMethodName().equals("Meta")) {
                            call = new io.grpc.ForwardingServerCall.SimpleForwardingServerCall<>(call) {
                                @Override
                                public void sendHeaders(Metadata responseHeaders) {
                                    responseHeaders.merge(headers);
                                    super.sendHeaders(responseHeaders);
                                }

                                @Override
                                public void close(Status status, Metadata trailers) {
                                    trailers.put(ASCII, "trailer-" + headers.get(ASCII));
                                    super.close(status, trailers);
                                }
                            };
                        }
                        return next.startCall(call, headers);
                    }
                })
                .addService(definition()).build().start();
    }

    int port() {
        return server.getPort();
    }

    private static MethodDescriptor<byte[], byte[]> method(String name, MethodDescriptor.MethodType type) {
        return MethodDescriptor.<byte[], byte[]>newBuilder().setType(type)
                .setFullMethodName(MethodDescriptor.generateFullMethodName(TestService.NAME, name))
                .setRequestMarshaller(StockGrpc.BYTES).setResponseMarshaller(StockGrpc.BYTES).build();
    }

    private ServerServiceDefinition definition() {
        return ServerServiceDefinition.builder(TestService.NAME)
                .addMethod(method("Echo", MethodDescriptor.MethodType.UNARY), ServerCalls.asyncUnaryCall((req, out) -> {
                    out.onNext(req);
                    out.onCompleted();
                }))
                .addMethod(method("Meta", MethodDescriptor.MethodType.UNARY), ServerCalls.asyncUnaryCall((req, out) -> {
                    out.onNext(req);
                    out.onCompleted();
                }))
                .addMethod(method("Stream", MethodDescriptor.MethodType.SERVER_STREAMING),
                        ServerCalls.asyncServerStreamingCall((req, out) -> {
                            int count = Bytes.toInt(java.util.Arrays.copyOfRange(req, 0, 4));
                            int size = Bytes.toInt(java.util.Arrays.copyOfRange(req, 4, 8));
                            for (int i = 0; i < count; i++) {
                                out.onNext(Bytes.pattern(size, i));
                            }
                            out.onCompleted();
                        }))
                .addMethod(method("Count", MethodDescriptor.MethodType.CLIENT_STREAMING),
                        ServerCalls.asyncClientStreamingCall(out -> new StreamObserver<byte[]>() {
                            int total;

                            @Override
                            public void onNext(byte[] value) {
                                total += value.length;
                            }

                            @Override
                            public void onError(Throwable t) {
                            }

                            @Override
                            public void onCompleted() {
                                out.onNext(Bytes.ofInt(total));
                                out.onCompleted();
                            }
                        }))
                .addMethod(method("Chat", MethodDescriptor.MethodType.BIDI_STREAMING),
                        ServerCalls.asyncBidiStreamingCall(out -> new StreamObserver<byte[]>() {
                            @Override
                            public void onNext(byte[] value) {
                                out.onNext(value);
                            }

                            @Override
                            public void onError(Throwable t) {
                            }

                            @Override
                            public void onCompleted() {
                                out.onCompleted();
                            }
                        }))
                .addMethod(method("Hang", MethodDescriptor.MethodType.UNARY), ServerCalls.asyncUnaryCall((req, out) ->
                        ((ServerCallStreamObserver<byte[]>) out).setOnCancelHandler(() -> { })))
                .addMethod(method("Throw", MethodDescriptor.MethodType.UNARY), ServerCalls.asyncUnaryCall((req, out) ->
                        out.onError(Status.NOT_FOUND.withDescription(ERROR_DESCRIPTION).asRuntimeException())))
                .build();
    }

    @Override
    public void close() {
        server.shutdownNow();
        try {
            server.awaitTermination(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
