package dev.rdmarpc.codegen.tests;

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
import dev.rdmarpc.core.AbstractStub;
import dev.rdmarpc.core.BindableService;
import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.Channel;
import dev.rdmarpc.core.ClientCall;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.MethodDescriptor.MethodType;
import dev.rdmarpc.core.ServerMethodDefinition;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.core.protobuf.ProtoMarshaller;
import org.junit.jupiter.api.Test;
import rdmarpc.test.kv.AdminRpc;
import rdmarpc.test.kv.KeyValueRpc;
import rdmarpc.test.kv.KvStore;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Compile-level checks of the generated classes: the assignments below only compile when the
 * generated API has the expected types, and reflection checks what the compiler cannot (which
 * methods do not exist, modifiers, annotations, descriptor contents).
 */
class GeneratedShapeTest {

    /** A channel the stubs can be built on; no call is made through it. */
    private static final Channel NO_CALLS = new Channel() {
        @Override
        public <ReqT, RespT> ClientCall<ReqT, RespT> newCall(MethodDescriptor<ReqT, RespT> method, CallOptions options) {
            throw new UnsupportedOperationException("shape tests make no calls");
        }

        @Override
        public String authority() {
            return "nowhere:1";
        }
    };

    @Test
    void serviceNamesAreProtoPackagePlusServiceName() {
        assertEquals("rdmarpc.test.echo.Echo", EchoRpc.SERVICE_NAME);
        assertEquals("rdmarpc.test.kv.KeyValue", KeyValueRpc.SERVICE_NAME);
        assertEquals("rdmarpc.test.kv.Admin", AdminRpc.SERVICE_NAME);
        assertEquals("rdmarpc.test.clash.ClashService", ClashServiceRpc.SERVICE_NAME);
        assertEquals("rdmarpc.test.editions.Editions", EditionsRpc.SERVICE_NAME);
    }

    @Test
    void descriptorsHaveFullNameKindAndProtoMarshallers() {
        assertDescriptor(EchoRpc.getUnaryMethod(), "rdmarpc.test.echo.Echo/Unary", MethodType.UNARY,
                EchoRequest.getDefaultInstance(), EchoResponse.getDefaultInstance());
        assertDescriptor(EchoRpc.getServerStreamMethod(), "rdmarpc.test.echo.Echo/ServerStream", MethodType.SERVER_STREAMING,
                EchoRequest.getDefaultInstance(), EchoResponse.getDefaultInstance());
        assertDescriptor(EchoRpc.getClientStreamMethod(), "rdmarpc.test.echo.Echo/ClientStream", MethodType.CLIENT_STREAMING,
                EchoRequest.getDefaultInstance(), EchoResponse.getDefaultInstance());
        assertDescriptor(EchoRpc.getBidiStreamMethod(), "rdmarpc.test.echo.Echo/BidiStream", MethodType.BIDI_STREAMING,
                EchoRequest.getDefaultInstance(), EchoResponse.getDefaultInstance());
        assertDescriptor(EchoRpc.getBatchPutMethod(), "rdmarpc.test.echo.Echo/BatchPut", MethodType.UNARY,
                Payload.getDefaultInstance(), Payload.getDefaultInstance());
        assertDescriptor(EchoRpc.getGetAllHeadersMethod(), "rdmarpc.test.echo.Echo/get_all_headers", MethodType.SERVER_STREAMING,
                Envelope.getDefaultInstance(), Envelope.Header.getDefaultInstance());
        assertDescriptor(EchoRpc.getImportMethod(), "rdmarpc.test.echo.Echo/Import", MethodType.UNARY,
                Empty.getDefaultInstance(), Empty.getDefaultInstance());
        assertDescriptor(EchoRpc.getDefaultMethod(), "rdmarpc.test.echo.Echo/default", MethodType.CLIENT_STREAMING,
                EchoRequest.getDefaultInstance(), Empty.getDefaultInstance());
        assertDescriptor(EchoRpc.getNotImplementedBidiMethod(), "rdmarpc.test.echo.Echo/NotImplementedBidi", MethodType.BIDI_STREAMING,
                EchoRequest.getDefaultInstance(), EchoResponse.getDefaultInstance());

        assertDescriptor(KeyValueRpc.getPutMethod(), "rdmarpc.test.kv.KeyValue/Put", MethodType.UNARY,
                KvStore.Kv.PutRequest.getDefaultInstance(), KvStore.Kv.PutResponse.getDefaultInstance());
        assertDescriptor(KeyValueRpc.getScanMethod(), "rdmarpc.test.kv.KeyValue/Scan", MethodType.SERVER_STREAMING,
                KvStore.StatsRequest.getDefaultInstance(), KvStore.Kv.PutRequest.getDefaultInstance());
        assertDescriptor(AdminRpc.getGetStatsMethod(), "rdmarpc.test.kv.Admin/GetStats", MethodType.UNARY,
                KvStore.StatsRequest.getDefaultInstance(), KvStore.Stats.getDefaultInstance());
        assertDescriptor(ClashServiceRpc.getCheckMethod(), "rdmarpc.test.clash.ClashService/Check", MethodType.UNARY,
                Clash.getDefaultInstance(), Clash.Inner.getDefaultInstance());
        assertDescriptor(EditionsRpc.getConvertMethod(), "rdmarpc.test.editions.Editions/Convert", MethodType.UNARY,
                Standalone.getDefaultInstance(), EditionsProto.Nested.getDefaultInstance());
        assertDescriptor(EditionsRpc.getDeeperMethod(), "rdmarpc.test.editions.Editions/Deeper", MethodType.UNARY,
                EditionsProto.Nested.getDefaultInstance(), EditionsProto.Nested.Deeper.getDefaultInstance());
    }

    private static <Req, Resp> void assertDescriptor(MethodDescriptor<Req, Resp> method, String fullName, MethodType type,
                                                     Req requestDefault, Resp responseDefault) {
        assertEquals(fullName, method.getFullMethodName());
        assertEquals(type, method.getType(), fullName);
        ProtoMarshaller<?> req = assertInstanceOf(ProtoMarshaller.class, method.getRequestMarshaller());
        ProtoMarshaller<?> resp = assertInstanceOf(ProtoMarshaller.class, method.getResponseMarshaller());
        assertSame(requestDefault, req.getDefaultInstance(), fullName);
        assertSame(responseDefault, resp.getDefaultInstance(), fullName);
    }

    @Test
    void descriptorsAreBuiltOnceAndCached() {
        assertSame(EchoRpc.getUnaryMethod(), EchoRpc.getUnaryMethod());
        assertSame(KeyValueRpc.getGetMethod(), KeyValueRpc.getGetMethod());
    }

    @Test
    void marshallersRoundTripThroughASegment() {
        MethodDescriptor<KvStore.Kv.PutRequest, KvStore.Kv.PutResponse> put = KeyValueRpc.getPutMethod();
        KvStore.Kv.PutRequest request = KvStore.Kv.PutRequest.newBuilder()
                .setKey("k").setValue(com.google.protobuf.ByteString.copyFromUtf8("value")).build();
        int size = put.getRequestMarshaller().serializedSize(request);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment segment = arena.allocate(size);
            put.getRequestMarshaller().write(request, segment);
            assertEquals(request, put.getRequestMarshaller().parse(segment));
        }
    }

    @Test
    void asyncStubHasEveryCallKind() {
        EchoRpc.EchoStub stub = EchoRpc.newStub(NO_CALLS);
        // Each assignment compiles only with the grpc-java-shaped signature.
        BiConsumer<EchoRequest, StreamObserver<EchoResponse>> unary = stub::unary;
        BiConsumer<EchoRequest, StreamObserver<EchoResponse>> serverStream = stub::serverStream;
        Function<StreamObserver<EchoResponse>, StreamObserver<EchoRequest>> clientStream = stub::clientStream;
        Function<StreamObserver<EchoResponse>, StreamObserver<EchoRequest>> bidi = stub::bidiStream;
        BiConsumer<Payload, StreamObserver<Payload>> batchPut = stub::batchPut;
        BiConsumer<Envelope, StreamObserver<Envelope.Header>> headers = stub::getAllHeaders;
        BiConsumer<Empty, StreamObserver<Empty>> keyword = stub::import_;
        Function<StreamObserver<Empty>, StreamObserver<EchoRequest>> keywordStreaming = stub::default_;
        List.of(unary, serverStream, clientStream, bidi, batchPut, headers, keyword, keywordStreaming);

        Set<String> plain = Set.of("unary", "serverStream", "clientStream", "bidiStream", "batchPut", "getAllHeaders",
                "import_", "default_", "notImplemented", "notImplementedBidi");
        // and one method per rpc whose messages carry attachments (a keyword's escape dropped before the suffix)
        Set<String> all = new java.util.HashSet<>(plain);
        plain.forEach(n -> all.add(n.replaceAll("_$", "") + "WithAttachment"));
        assertEquals(all, declaredPublicMethods(EchoRpc.EchoStub.class));
    }

    @Test
    void blockingStubHasUnaryAndServerStreamingOnly() throws Exception {
        EchoRpc.EchoBlockingStub stub = EchoRpc.newBlockingStub(NO_CALLS);
        Function<EchoRequest, EchoResponse> unary = stub::unary;
        Function<EchoRequest, Iterator<EchoResponse>> serverStream = stub::serverStream;
        Function<Envelope, Iterator<Envelope.Header>> headers = stub::getAllHeaders;
        Function<Empty, Empty> keyword = stub::import_;
        List.of(unary, serverStream, headers, keyword);

        assertEquals(Set.of("unary", "serverStream", "batchPut", "getAllHeaders", "import_", "notImplemented"),
                declaredPublicMethods(EchoRpc.EchoBlockingStub.class));
        Type iterator = EchoRpc.EchoBlockingStub.class.getMethod("serverStream", EchoRequest.class).getGenericReturnType();
        assertEquals(Iterator.class, ((ParameterizedType) iterator).getRawType());
        assertEquals(EchoResponse.class, ((ParameterizedType) iterator).getActualTypeArguments()[0]);
    }

    @Test
    void futureStubHasUnaryOnly() throws Exception {
        EchoRpc.EchoFutureStub stub = EchoRpc.newFutureStub(NO_CALLS);
        Function<EchoRequest, CompletableFuture<EchoResponse>> unary = stub::unary;
        Function<Payload, CompletableFuture<Payload>> batchPut = stub::batchPut;
        Function<Empty, CompletableFuture<Empty>> keyword = stub::import_;
        List.of(unary, batchPut, keyword);

        assertEquals(Set.of("unary", "batchPut", "import_", "notImplemented"), declaredPublicMethods(EchoRpc.EchoFutureStub.class));
        Type future = EchoRpc.EchoFutureStub.class.getMethod("unary", EchoRequest.class).getGenericReturnType();
        assertEquals(CompletableFuture.class, ((ParameterizedType) future).getRawType());
    }

    @Test
    void stubsAreFinalAbstractStubsThatKeepTheirTypeWhenReconfigured() {
        for (Class<?> c : List.of(EchoRpc.EchoStub.class, EchoRpc.EchoBlockingStub.class, EchoRpc.EchoFutureStub.class)) {
            assertTrue(AbstractStub.class.isAssignableFrom(c), c.getName());
            assertTrue(Modifier.isFinal(c.getModifiers()), c.getName());
            assertTrue(Modifier.isStatic(c.getModifiers()), c.getName());
        }
        EchoRpc.EchoBlockingStub stub = EchoRpc.newBlockingStub(NO_CALLS);
        EchoRpc.EchoBlockingStub withDeadline = stub.withDeadlineAfter(5, TimeUnit.SECONDS);
        assertNotSame(stub, withDeadline);
        assertSame(NO_CALLS, withDeadline.getChannel());
        assertTrue(withDeadline.getCallOptions().getDeadline() != null);
        assertSame(CallOptions.DEFAULT, stub.getCallOptions());
    }

    @Test
    void rpcClassIsFinalWithAPrivateConstructor() {
        for (Class<?> c : List.of(EchoRpc.class, KeyValueRpc.class, AdminRpc.class, ClashServiceRpc.class, EditionsRpc.class)) {
            assertTrue(Modifier.isFinal(c.getModifiers()), c.getName());
            assertTrue(Arrays.stream(c.getDeclaredConstructors()).allMatch(k -> Modifier.isPrivate(k.getModifiers())), c.getName());
        }
    }

    @Test
    void implBaseDefaultsToUnimplemented() throws Exception {
        EchoRpc.EchoImplBase base = new EchoRpc.EchoImplBase() {
        };
        assertTrue(Modifier.isAbstract(EchoRpc.EchoImplBase.class.getModifiers()));
        assertInstanceOf(BindableService.class, base);

        RecordingObserver<EchoResponse> unary = new RecordingObserver<>();
        base.unary(EchoRequest.getDefaultInstance(), unary);
        assertUnimplemented(unary.awaitError(), "rdmarpc.test.echo.Echo/Unary");

        RecordingObserver<EchoResponse> bidi = new RecordingObserver<>();
        StreamObserver<EchoRequest> requests = base.bidiStream(bidi);
        requests.onNext(EchoRequest.getDefaultInstance());
        requests.onCompleted();
        assertUnimplemented(bidi.awaitError(), "rdmarpc.test.echo.Echo/BidiStream");

        RecordingObserver<Empty> keyword = new RecordingObserver<>();
        base.default_(keyword);
        assertUnimplemented(keyword.awaitError(), "rdmarpc.test.echo.Echo/default");
    }

    private static void assertUnimplemented(Throwable error, String method) {
        StatusException se = assertInstanceOf(StatusException.class, error);
        assertEquals(Status.Code.UNIMPLEMENTED, se.getStatus().getCode());
        assertTrue(se.getStatus().getDescription().contains(method), se.getStatus().getDescription());
    }

    @Test
    void bindServiceListsEveryMethodWithItsDescriptor() throws Exception {
        ServiceDefinition definition = new EchoService().bindService();
        assertEquals(EchoRpc.SERVICE_NAME, definition.getServiceName());
        assertEquals(List.of("Unary", "ServerStream", "ClientStream", "BidiStream", "BatchPut", "get_all_headers", "Import",
                        "default", "NotImplemented", "NotImplementedBidi"),
                definition.getMethods().stream().map(m -> m.method().getBareMethodName()).toList());
        List<String> getters = List.of("getUnaryMethod", "getServerStreamMethod", "getClientStreamMethod", "getBidiStreamMethod",
                "getBatchPutMethod", "getGetAllHeadersMethod", "getImportMethod", "getDefaultMethod", "getNotImplementedMethod",
                "getNotImplementedBidiMethod");
        List<ServerMethodDefinition<?, ?>> methods = List.copyOf(definition.getMethods());
        for (int i = 0; i < getters.size(); i++) {
            Method getter = EchoRpc.class.getMethod(getters.get(i));
            assertSame(getter.invoke(null), methods.get(i).method());
        }
        assertTrue(Modifier.isFinal(EchoRpc.EchoImplBase.class.getMethod("bindService").getModifiers()));

        ServiceDefinition admin = new AdminRpc.AdminImplBase() {
        }.bindService();
        assertEquals("rdmarpc.test.kv.Admin", admin.getServiceName());
        assertEquals(2, admin.getMethods().size());
    }

    @Test
    void deprecatedRpcsAreDeprecatedInEveryStubAndTheBase() throws Exception {
        Class<?>[] unaryParams = {KvStore.StatsRequest.class};
        assertTrue(AdminRpc.AdminBlockingStub.class.getMethod("compact", unaryParams).isAnnotationPresent(Deprecated.class));
        assertTrue(AdminRpc.AdminFutureStub.class.getMethod("compact", unaryParams).isAnnotationPresent(Deprecated.class));
        assertTrue(AdminRpc.AdminStub.class.getMethod("compact", KvStore.StatsRequest.class, StreamObserver.class)
                .isAnnotationPresent(Deprecated.class));
        assertTrue(AdminRpc.AdminImplBase.class.getMethod("compact", KvStore.StatsRequest.class, StreamObserver.class)
                .isAnnotationPresent(Deprecated.class));
        assertTrue(AdminRpc.class.getMethod("getCompactMethod").isAnnotationPresent(Deprecated.class));
        assertFalse(AdminRpc.AdminBlockingStub.class.getMethod("getStats", unaryParams).isAnnotationPresent(Deprecated.class));
    }

    @Test
    void protoCommentsBecomeEscapedJavadoc() throws IOException {
        String source = Files.readString(Path.of("target/generated-test-sources/protobuf/dev/rdmarpc/codegen/tests/echo/EchoRpc.java"));
        assertTrue(source.startsWith("// Generated by the rdmarpc protoc plugin"), source.substring(0, 80));
        assertTrue(source.contains(" * <pre>\n *  Echoes what it gets.\n"), "service comment");
        assertTrue(source.contains("&lt;b&gt; &amp; &#64;see *&#47; &#92;u0041."), "escaped service comment");
        assertTrue(source.contains(" *  Many requests, one response joining their texts.\n"), "method comment");
    }

    private static Set<String> declaredPublicMethods(Class<?> c) {
        return Arrays.stream(c.getDeclaredMethods())
                .filter(m -> Modifier.isPublic(m.getModifiers()))
                .map(Method::getName)
                .collect(Collectors.toSet());
    }
}
