package dev.rdmarpc.codegen.tests;

import dev.rdmarpc.codegen.tests.names.Ping;
import dev.rdmarpc.codegen.tests.names.Pong;
import dev.rdmarpc.codegen.tests.names.stats_serviceRpc;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.MethodDescriptor.MethodType;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.StreamObserver;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The service of {@code grpc_names.proto} (snake_case, Java keywords, names of Object's and the stubs' own methods)
 * through its generated class with grpc-java's names, end to end on loopback: each rpc answers with its own name.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UnusualNamesTest {
    private static RpcServer server;
    private static RpcChannel channel;

    /** Answers every unary and server-streaming rpc with its proto name, streaming ones with the texts received. */
    private static final class NamesService extends stats_serviceRpc.stats_serviceImplBase {
        private static void reply(String rpc, Ping request, StreamObserver<Pong> responseObserver) {
            responseObserver.onNext(Pong.newBuilder().setText(rpc + ":" + request.getText()).build());
            responseObserver.onCompleted();
        }

        @Override
        public void getStats(Ping request, StreamObserver<Pong> responseObserver) {
            reply("get_stats", request, responseObserver);
        }

        @Override
        public void hashCode(Ping request, StreamObserver<Pong> responseObserver) {
            reply("hashCode", request, responseObserver);
        }

        @Override
        public void toString(Ping request, StreamObserver<Pong> responseObserver) {
            responseObserver.onNext(Pong.newBuilder().setText("toString:1").build());
            reply("toString", request, responseObserver);
        }

        @Override
        public StreamObserver<Ping> class_(StreamObserver<Pong> responseObserver) {
            return joining("class", responseObserver, false);
        }

        @Override
        public StreamObserver<Ping> import_(StreamObserver<Pong> responseObserver) {
            return joining("import", responseObserver, true);
        }

        @Override
        public void true_(Ping request, StreamObserver<Pong> responseObserver) {
            reply("true", request, responseObserver);
        }

        @Override
        public void _leadingUnderscore(Ping request, StreamObserver<Pong> responseObserver) {
            reply("_leading_underscore", request, responseObserver);
        }

        @Override
        public void gETALLCAPS(Ping request, StreamObserver<Pong> responseObserver) {
            reply("GET_ALL_CAPS", request, responseObserver);
        }

        @Override
        public void withDigit2x(Ping request, StreamObserver<Pong> responseObserver) {
            reply("with_digit_2x", request, responseObserver);
        }

        @Override
        public void bindService(Ping request, StreamObserver<Pong> responseObserver) {
            reply("bindService", request, responseObserver);
        }

        @Override
        public StreamObserver<Ping> getClass(StreamObserver<Pong> responseObserver) {
            return joining("getClass", responseObserver, false);
        }

        @Override
        public void equals(Ping request, StreamObserver<Pong> responseObserver) {
            reply("equals", request, responseObserver);
        }

        @Override
        public void build(Ping request, StreamObserver<Pong> responseObserver) {
            reply("build", request, responseObserver);
        }

        @Override
        public void getChannel(Ping request, StreamObserver<Pong> responseObserver) {
            reply("GetChannel", request, responseObserver);
        }

        /** Answers each request at once ({@code echoEach}) or all of them joined at the end. */
        private static StreamObserver<Ping> joining(String rpc, StreamObserver<Pong> responseObserver, boolean echoEach) {
            StringBuilder texts = new StringBuilder(rpc + ":");
            return new StreamObserver<>() {
                @Override
                public void onNext(Ping value) {
                    if (echoEach) {
                        responseObserver.onNext(Pong.newBuilder().setText(rpc + ":" + value.getText()).build());
                    } else {
                        texts.append(value.getText());
                    }
                }

                @Override
                public void onError(Throwable t) {
                }

                @Override
                public void onCompleted() {
                    if (!echoEach) {
                        responseObserver.onNext(Pong.newBuilder().setText(texts.toString()).build());
                    }
                    responseObserver.onCompleted();
                }
            };
        }
    }

    @BeforeAll
    static void start() throws IOException {
        server = RpcServer.forPort(0).addService(new NamesService()).build().start();
        channel = RpcChannel.forAddress("127.0.0.1", server.getPort()).build();
    }

    @AfterAll
    static void stop() throws InterruptedException {
        channel.shutdownNow();
        server.shutdownNow();
        server.awaitTermination(10, TimeUnit.SECONDS);
    }

    private static Ping ping(String text) {
        return Ping.newBuilder().setText(text).build();
    }

    @Test
    void descriptorGettersHaveGrpcJavasNamesAndTheProtoPaths() {
        assertDescriptor(stats_serviceRpc.getGetStatsMethod(), "get_stats", MethodType.UNARY);
        assertDescriptor(stats_serviceRpc.getHashCodeMethod(), "hashCode", MethodType.UNARY);
        assertDescriptor(stats_serviceRpc.getToStringMethod(), "toString", MethodType.SERVER_STREAMING);
        assertDescriptor(stats_serviceRpc.getClassMethod(), "class", MethodType.CLIENT_STREAMING);
        assertDescriptor(stats_serviceRpc.getImportMethod(), "import", MethodType.BIDI_STREAMING);
        assertDescriptor(stats_serviceRpc.getTrueMethod(), "true", MethodType.UNARY);
        assertDescriptor(stats_serviceRpc.getLeadingUnderscoreMethod(), "_leading_underscore", MethodType.UNARY);
        assertDescriptor(stats_serviceRpc.getGETALLCAPSMethod(), "GET_ALL_CAPS", MethodType.UNARY);
        assertDescriptor(stats_serviceRpc.getWithDigit2xMethod(), "with_digit_2x", MethodType.UNARY);
        assertDescriptor(stats_serviceRpc.getBindServiceMethod(), "bindService", MethodType.UNARY);
        assertDescriptor(stats_serviceRpc.getGetClassMethod(), "getClass", MethodType.CLIENT_STREAMING);
        assertDescriptor(stats_serviceRpc.getEqualsMethod(), "equals", MethodType.UNARY);
        assertDescriptor(stats_serviceRpc.getBuildMethod(), "build", MethodType.UNARY);
        assertDescriptor(stats_serviceRpc.getGetChannelMethod(), "GetChannel", MethodType.UNARY);
        assertEquals("rdmarpc.test.names.stats_service", stats_serviceRpc.SERVICE_NAME);
    }

    private static void assertDescriptor(MethodDescriptor<Ping, Pong> d, String rpc, MethodType type) {
        assertEquals("rdmarpc.test.names.stats_service/" + rpc, d.getFullMethodName());
        assertEquals(type, d.getType());
    }

    @Test
    void blockingStubCallsEveryUnaryAndServerStreamingRpc() {
        stats_serviceRpc.stats_serviceBlockingStub stub = stats_serviceRpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
        assertEquals("get_stats:a", stub.getStats(ping("a")).getText());
        assertEquals("hashCode:b", stub.hashCode(ping("b")).getText());
        assertEquals("true:c", stub.true_(ping("c")).getText());
        assertEquals("_leading_underscore:d", stub._leadingUnderscore(ping("d")).getText());
        assertEquals("GET_ALL_CAPS:e", stub.gETALLCAPS(ping("e")).getText());
        assertEquals("with_digit_2x:f", stub.withDigit2x(ping("f")).getText());
        assertEquals("bindService:g", stub.bindService(ping("g")).getText());
        assertEquals("equals:h", stub.equals(ping("h")).getText());
        assertEquals("build:i", stub.build(ping("i")).getText());
        assertEquals("GetChannel:j", stub.getChannel(ping("j")).getText());
        List<String> streamed = new ArrayList<>();
        for (Iterator<Pong> it = stub.toString(ping("k")); it.hasNext(); ) {
            streamed.add(it.next().getText());
        }
        assertEquals(List.of("toString:1", "toString:k"), streamed);
    }

    @Test
    void futureStubCallsAUnaryRpcNamedLikeAnObjectMethod() throws Exception {
        assertEquals("hashCode:x", stats_serviceRpc.newFutureStub(channel).hashCode(ping("x")).get(30, TimeUnit.SECONDS).getText());
    }

    @Test
    void asyncStubCallsTheStreamingRpcsNamedLikeKeywordsAndObjectMethods() throws Exception {
        stats_serviceRpc.stats_serviceStub stub = stats_serviceRpc.newStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);

        RecordingObserver<Pong> classResponses = new RecordingObserver<>();
        StreamObserver<Ping> classRequests = stub.class_(classResponses);
        classRequests.onNext(ping("1"));
        classRequests.onNext(ping("2"));
        classRequests.onCompleted();
        assertEquals(List.of("class:12"), texts(classResponses.await()));

        RecordingObserver<Pong> getClassResponses = new RecordingObserver<>();
        StreamObserver<Ping> getClassRequests = stub.getClass(getClassResponses);
        getClassRequests.onNext(ping("3"));
        getClassRequests.onCompleted();
        assertEquals(List.of("getClass:3"), texts(getClassResponses.await()));

        RecordingObserver<Pong> importResponses = new RecordingObserver<>();
        StreamObserver<Ping> importRequests = stub.import_(importResponses);
        importRequests.onNext(ping("4"));
        importRequests.onNext(ping("5"));
        importRequests.onCompleted();
        assertEquals(List.of("import:4", "import:5"), texts(importResponses.await()));

        RecordingObserver<Pong> unary = new RecordingObserver<>();
        stub.getStats(ping("6"), unary);
        assertEquals(List.of("get_stats:6"), texts(unary.await()));
    }

    private static List<String> texts(List<Pong> pongs) {
        return pongs.stream().map(Pong::getText).toList();
    }
}
