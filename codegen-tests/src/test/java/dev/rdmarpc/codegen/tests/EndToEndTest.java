package dev.rdmarpc.codegen.tests;

import com.google.protobuf.ByteString;
import com.google.protobuf.Empty;
import dev.rdmarpc.codegen.tests.clash.ClashOuterClass.Clash;
import dev.rdmarpc.codegen.tests.clash.ClashServiceRpc;
import dev.rdmarpc.codegen.tests.common.CommonTypes.Envelope;
import dev.rdmarpc.codegen.tests.common.CommonTypes.Payload;
import dev.rdmarpc.codegen.tests.echo.EchoRequest;
import dev.rdmarpc.codegen.tests.echo.EchoResponse;
import dev.rdmarpc.codegen.tests.echo.EchoRpc;
import dev.rdmarpc.codegen.tests.editions.EditionsProto;
import dev.rdmarpc.codegen.tests.editions.EditionsRpc;
import dev.rdmarpc.codegen.tests.editions.Standalone;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.StreamObserver;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import rdmarpc.test.kv.AdminRpc;
import rdmarpc.test.kv.KeyValueRpc;
import rdmarpc.test.kv.KvStore;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every call kind in every stub style through the generated classes, against a real server and
 * channel on loopback; five services from four files on one server.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EndToEndTest {
    private static EchoService echo;
    private static RpcServer server;
    private static RpcChannel channel;

    @BeforeAll
    static void start() throws IOException {
        echo = new EchoService();
        server = RpcServer.forPort(0)
                .addService(echo)
                .addService(new KeyValueService())
                .addService(new AdminRpc.AdminImplBase() {
                    @Override
                    public void getStats(KvStore.StatsRequest request, StreamObserver<KvStore.Stats> responseObserver) {
                        responseObserver.onNext(KvStore.Stats.newBuilder().setKeys(7).build());
                        responseObserver.onCompleted();
                    }
                })
                .addService(new ClashServiceRpc.ClashServiceImplBase() {
                    @Override
                    public void check(Clash request, StreamObserver<Clash.Inner> responseObserver) {
                        responseObserver.onNext(Clash.Inner.newBuilder().setN(request.getName().length()).build());
                        responseObserver.onCompleted();
                    }
                })
                .addService(new EditionsRpc.EditionsImplBase() {
                    @Override
                    public void convert(Standalone request, StreamObserver<EditionsProto.Nested> responseObserver) {
                        responseObserver.onNext(EditionsProto.Nested.newBuilder().setText(request.getText()).build());
                        responseObserver.onCompleted();
                    }
                })
                .build()
                .start();
        channel = RpcChannel.forAddress("127.0.0.1", server.getPort()).build();
    }

    @AfterAll
    static void stop() throws InterruptedException {
        if (channel != null) {
            channel.shutdownNow();
            channel.awaitTermination(60, TimeUnit.SECONDS);
        }
        if (server != null) {
            server.shutdownNow();
            server.awaitTermination(60, TimeUnit.SECONDS);
        }
    }

    private static EchoRequest request(String text) {
        return EchoRequest.newBuilder().setText(text).build();
    }

    // ---------------------------------------------------------------- unary

    @Test
    void unaryAsync() throws Exception {
        RecordingObserver<EchoResponse> responses = new RecordingObserver<>();
        EchoRpc.newStub(channel).unary(request("hello"), responses);
        assertEquals(List.of(EchoResponse.newBuilder().setText("hello").build()), responses.await());
    }

    @Test
    void unaryBlocking() {
        assertEquals("hello", EchoRpc.newBlockingStub(channel).unary(request("hello")).getText());
    }

    @Test
    void unaryFuture() throws Exception {
        CompletableFuture<EchoResponse> future = EchoRpc.newFutureStub(channel).unary(request("hello"));
        assertEquals("hello", future.get(60, TimeUnit.SECONDS).getText());
    }

    @Test
    void unaryErrorsReachEveryStyle() throws Exception {
        EchoRequest failing = EchoRequest.newBuilder().setText("no").setFailWithCode(Status.Code.NOT_FOUND.value()).build();

        StatusException blocking = assertThrows(StatusException.class, () -> EchoRpc.newBlockingStub(channel).unary(failing));
        assertEquals(Status.Code.NOT_FOUND, blocking.getStatus().getCode());
        assertEquals("asked to fail: no", blocking.getStatus().getDescription());

        ExecutionException future = assertThrows(ExecutionException.class,
                () -> EchoRpc.newFutureStub(channel).unary(failing).get(60, TimeUnit.SECONDS));
        assertEquals(Status.Code.NOT_FOUND, assertInstanceOf(StatusException.class, future.getCause()).getStatus().getCode());

        RecordingObserver<EchoResponse> async = new RecordingObserver<>();
        EchoRpc.newStub(channel).unary(failing, async);
        assertEquals(Status.Code.NOT_FOUND, assertInstanceOf(StatusException.class, async.awaitError()).getStatus().getCode());
    }

    // ---------------------------------------------------------------- server streaming

    @Test
    void serverStreamingAsync() throws Exception {
        RecordingObserver<EchoResponse> responses = new RecordingObserver<>();
        EchoRpc.newStub(channel).serverStream(EchoRequest.newBuilder().setText("s").setCount(5).build(), responses);
        List<EchoResponse> got = responses.await();
        assertEquals(5, got.size());
        for (int i = 0; i < 5; i++) {
            assertEquals(i, got.get(i).getIndex());
        }
    }

    @Test
    void serverStreamingBlocking() {
        Iterator<EchoResponse> it = EchoRpc.newBlockingStub(channel)
                .serverStream(EchoRequest.newBuilder().setText("s").setCount(100).build());
        int n = 0;
        while (it.hasNext()) {
            assertEquals(n++, it.next().getIndex());
        }
        assertEquals(100, n);
    }

    /**
     * The server's error surfaces from the iterator. (Whether the responses sent before it are
     * delivered first is rpc-core's call semantics, tested there, not the stub's.)
     */
    @Test
    void serverStreamingBlockingSurfacesTheError() {
        Iterator<EchoResponse> it = EchoRpc.newBlockingStub(channel).serverStream(EchoRequest.newBuilder()
                .setText("s").setCount(2).setFailWithCode(Status.Code.ABORTED.value()).build());
        int[] received = {0};
        StatusException e = assertThrows(StatusException.class, () -> {
            while (it.hasNext()) {
                it.next();
                received[0]++;
            }
        });
        assertEquals(Status.Code.ABORTED, e.getStatus().getCode());
        assertTrue(received[0] <= 2, "received " + received[0]);
    }

    // ---------------------------------------------------------------- client and bidi streaming

    @Test
    void clientStreamingAsync() throws Exception {
        RecordingObserver<EchoResponse> responses = new RecordingObserver<>();
        StreamObserver<EchoRequest> requests = EchoRpc.newStub(channel).clientStream(responses);
        for (String s : List.of("a", "b", "c")) {
            requests.onNext(request(s));
        }
        requests.onCompleted();
        assertEquals(List.of(EchoResponse.newBuilder().setText("abc").setIndex(3).build()), responses.await());
    }

    @Test
    void bidiStreamingAsync() throws Exception {
        RecordingObserver<EchoResponse> responses = new RecordingObserver<>();
        StreamObserver<EchoRequest> requests = EchoRpc.newStub(channel).bidiStream(responses);
        List<String> sent = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            sent.add("m" + i);
            requests.onNext(request("m" + i));
        }
        requests.onCompleted();
        List<EchoResponse> got = responses.await();
        assertEquals(sent.stream().map(String::toUpperCase).toList(), got.stream().map(EchoResponse::getText).toList());
    }

    // ---------------------------------------------------------------- names, imported and nested types

    @Test
    void camelCasedMethodsWithImportedTypes() throws Exception {
        Payload in = Payload.newBuilder().setText("p").setN(1).build();
        assertEquals(2, EchoRpc.newBlockingStub(channel).batchPut(in).getN());
        assertEquals(2, EchoRpc.newFutureStub(channel).batchPut(in).get(60, TimeUnit.SECONDS).getN());

        Envelope envelope = Envelope.newBuilder()
                .addHeaders(Envelope.Header.newBuilder().setKey("a").setValue("1"))
                .addHeaders(Envelope.Header.newBuilder().setKey("b"))
                .build();
        List<Envelope.Header> headers = new ArrayList<>();
        EchoRpc.newBlockingStub(channel).getAllHeaders(envelope).forEachRemaining(headers::add);
        assertEquals(envelope.getHeadersList(), headers);
        assertFalse(headers.get(1).hasValue());

        RecordingObserver<Envelope.Header> async = new RecordingObserver<>();
        EchoRpc.newStub(channel).getAllHeaders(envelope, async);
        assertEquals(envelope.getHeadersList(), async.await());
    }

    @Test
    void keywordMethods() throws Exception {
        assertEquals(Empty.getDefaultInstance(), EchoRpc.newBlockingStub(channel).import_(Empty.getDefaultInstance()));

        int before = echo.defaultRequests.get();
        RecordingObserver<Empty> done = new RecordingObserver<>();
        StreamObserver<EchoRequest> requests = EchoRpc.newStub(channel).default_(done);
        requests.onNext(request("x"));
        requests.onNext(request("y"));
        requests.onCompleted();
        assertEquals(List.of(Empty.getDefaultInstance()), done.await());
        assertEquals(before + 2, echo.defaultRequests.get());
    }

    @Test
    void nestedTypesAndSeveralServicesOfOneFile() {
        KeyValueRpc.KeyValueBlockingStub kv = KeyValueRpc.newBlockingStub(channel);
        ByteString value = ByteString.copyFromUtf8("v1");
        assertTrue(kv.put(KvStore.Kv.PutRequest.newBuilder().setKey("k1").setValue(value).build()).getCreated());
        assertFalse(kv.put(KvStore.Kv.PutRequest.newBuilder().setKey("k1").setValue(value).build()).getCreated());
        KvStore.Kv.GetResponse got = kv.get(KvStore.Kv.GetRequest.newBuilder().setKey("k1").build());
        assertTrue(got.getFound());
        assertEquals(value, got.getValue());
        Iterator<KvStore.Kv.PutRequest> scan = kv.scan(KvStore.StatsRequest.getDefaultInstance());
        assertTrue(scan.hasNext());
        assertEquals("k1", scan.next().getKey());

        assertEquals(7, AdminRpc.newBlockingStub(channel).getStats(KvStore.StatsRequest.getDefaultInstance()).getKeys());
    }

    @Test
    @SuppressWarnings("deprecation")
    void unimplementedMethodsFailWithUnimplemented() throws Exception {
        StatusException unary = assertThrows(StatusException.class,
                () -> EchoRpc.newBlockingStub(channel).notImplemented(request("x")));
        assertEquals(Status.Code.UNIMPLEMENTED, unary.getStatus().getCode());

        RecordingObserver<EchoResponse> bidi = new RecordingObserver<>();
        StreamObserver<EchoRequest> requests = EchoRpc.newStub(channel).notImplementedBidi(bidi);
        requests.onNext(request("x"));
        requests.onCompleted();
        assertEquals(Status.Code.UNIMPLEMENTED, assertInstanceOf(StatusException.class, bidi.awaitError()).getStatus().getCode());

        StatusException deprecated = assertThrows(StatusException.class,
                () -> AdminRpc.newBlockingStub(channel).compact(KvStore.StatsRequest.getDefaultInstance()));
        assertEquals(Status.Code.UNIMPLEMENTED, deprecated.getStatus().getCode());

        StatusException editions = assertThrows(StatusException.class,
                () -> EditionsRpc.newBlockingStub(channel).deeper(EditionsProto.Nested.getDefaultInstance()));
        assertEquals(Status.Code.UNIMPLEMENTED, editions.getStatus().getCode());
    }

    @Test
    void outerClassNameRulesAndEditions() {
        assertEquals(4, ClashServiceRpc.newBlockingStub(channel).check(Clash.newBuilder().setName("four").build()).getN());
        assertEquals("ed", EditionsRpc.newBlockingStub(channel).convert(Standalone.newBuilder().setText("ed").build()).getText());
    }

    @Test
    void stubOptionsApply() {
        StatusException e = assertThrows(StatusException.class, () -> EchoRpc.newBlockingStub(channel)
                .withDeadlineAfter(1, TimeUnit.NANOSECONDS)
                .unary(request("late")));
        assertEquals(Status.Code.DEADLINE_EXCEEDED, e.getStatus().getCode());
    }

    /** KeyValue over a map. */
    private static final class KeyValueService extends KeyValueRpc.KeyValueImplBase {
        private final Map<String, ByteString> map = new ConcurrentHashMap<>();

        @Override
        public void put(KvStore.Kv.PutRequest request, StreamObserver<KvStore.Kv.PutResponse> responseObserver) {
            boolean created = map.put(request.getKey(), request.getValue()) == null;
            responseObserver.onNext(KvStore.Kv.PutResponse.newBuilder().setCreated(created).build());
            responseObserver.onCompleted();
        }

        @Override
        public void get(KvStore.Kv.GetRequest request, StreamObserver<KvStore.Kv.GetResponse> responseObserver) {
            ByteString v = map.get(request.getKey());
            responseObserver.onNext(v == null ? KvStore.Kv.GetResponse.getDefaultInstance()
                    : KvStore.Kv.GetResponse.newBuilder().setFound(true).setValue(v).build());
            responseObserver.onCompleted();
        }

        @Override
        public void scan(KvStore.StatsRequest request, StreamObserver<KvStore.Kv.PutRequest> responseObserver) {
            map.forEach((k, v) -> responseObserver.onNext(KvStore.Kv.PutRequest.newBuilder().setKey(k).setValue(v).build()));
            responseObserver.onCompleted();
        }
    }
}
