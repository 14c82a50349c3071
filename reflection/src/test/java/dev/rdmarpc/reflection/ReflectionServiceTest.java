package dev.rdmarpc.reflection;

import com.google.protobuf.ByteString;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.ServerCalls;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.core.protobuf.ProtoMarshaller;
import dev.rdmarpc.reflection.test.InventoryRpc;
import dev.rdmarpc.reflection.test.Total;
import dev.rdmarpc.reflection.v1.ErrorResponse;
import dev.rdmarpc.reflection.v1.ExtensionRequest;
import dev.rdmarpc.reflection.v1.ServerReflectionRequest;
import dev.rdmarpc.reflection.v1.ServerReflectionResponse;
import dev.rdmarpc.reflection.v1.ServerReflectionRpc;
import dev.rdmarpc.reflection.v1.ServiceResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The reflection services on a real server with a generated service (nested types, an enum, extensions, a dependency)
 * and a hand-made one without a schema, asked by an rdmarpc channel over loopback TCP: every request kind, the
 * NOT_FOUND and UNIMPLEMENTED error responses (the stream goes on after them), and v1alpha.
 */
class ReflectionServiceTest {
    private static final String PKG = "rdmarpc.reflection.test.";
    private static final String INVENTORY_FILE = "rdmarpc/reflection/test/inventory.proto";
    private static final String TOTALS_FILE = "rdmarpc/reflection/test/totals.proto";

    private RpcServer server;
    private RpcChannel channel;

    @BeforeEach
    void start() throws Exception {
        MethodDescriptor<Total, Total> plain = MethodDescriptor.create("plain.NoSchema/Echo", MethodDescriptor.MethodType.UNARY,
                ProtoMarshaller.of(Total.getDefaultInstance()), ProtoMarshaller.of(Total.getDefaultInstance()));
        server = RpcServer.forPort(0)
                .addService(new InventoryRpc.InventoryImplBase() {
                })
                .addService(ServiceDefinition.builder("plain.NoSchema")
                        .addMethod(plain, ServerCalls.<Total, Total>asyncUnaryCall((r, o) -> {
                            o.onNext(r);
                            o.onCompleted();
                        }))
                        .build())
                .addService(new ReflectionService())
                .addService(new ReflectionServiceV1Alpha())
                .build().start();
        channel = RpcChannel.forAddress("127.0.0.1", server.getPort()).build();
    }

    @AfterEach
    void stop() throws Exception {
        channel.shutdownNow();
        server.shutdownNow();
        server.awaitTermination(60, TimeUnit.SECONDS);
    }

    /** The answers of one stream, complete once the server has ended it. */
    private static final class Answers<T> implements StreamObserver<T> {
        final CompletableFuture<List<T>> done = new CompletableFuture<>();
        private final List<T> answers = new ArrayList<>();

        @Override
        public void onNext(T value) {
            answers.add(value);
        }

        @Override
        public void onError(Throwable t) {
            done.completeExceptionally(t);
        }

        @Override
        public void onCompleted() {
            done.complete(answers);
        }
    }

    /** Sends the requests on one stream, half-closes it, and returns the answers once the server has ended it. */
    private List<ServerReflectionResponse> ask(ServerReflectionRequest... requests) throws Exception {
        Answers<ServerReflectionResponse> answers = new Answers<>();
        StreamObserver<ServerReflectionRequest> out = ServerReflectionRpc.newStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS)
                .serverReflectionInfo(answers);
        for (ServerReflectionRequest r : requests) {
            out.onNext(r);
        }
        out.onCompleted();
        return answers.done.get(60, TimeUnit.SECONDS);
    }

    private static ServerReflectionRequest.Builder request() {
        return ServerReflectionRequest.newBuilder().setHost("localhost");
    }

    private static List<String> fileNames(ServerReflectionResponse r) throws InvalidProtocolBufferException {
        assertTrue(r.hasFileDescriptorResponse(), () -> "a file descriptor response, not " + r);
        List<String> names = new ArrayList<>();
        for (ByteString bytes : r.getFileDescriptorResponse().getFileDescriptorProtoList()) {
            names.add(FileDescriptorProto.parseFrom(bytes).getName());
        }
        return names;
    }

    private static void assertError(Status.Code code, ServerReflectionResponse r) {
        assertTrue(r.hasErrorResponse(), () -> "an error response, not " + r);
        ErrorResponse e = r.getErrorResponse();
        assertEquals(code.value(), e.getErrorCode(), e.getErrorMessage());
    }

    @Test
    void listsTheServicesWithASchemaAndEchoesHostAndRequest() throws Exception {
        ServerReflectionRequest list = request().setListServices("*").build();
        ServerReflectionResponse r = ask(list).getFirst();
        assertEquals("localhost", r.getValidHost());
        assertEquals(list, r.getOriginalRequest());
        Set<String> names = r.getListServicesResponse().getServiceList().stream().map(ServiceResponse::getName)
                .collect(Collectors.toSet());
        assertEquals(Set.of(PKG + "Inventory", "grpc.reflection.v1.ServerReflection",
                "grpc.reflection.v1alpha.ServerReflection"), names, "the service without a schema is not listed");
    }

    @Test
    void filesBySymbolComeWithTheirDependencies() throws Exception {
        List<ServerReflectionResponse> answers = ask(
                request().setFileContainingSymbol(PKG + "Inventory").build(),
                request().setFileContainingSymbol(PKG + "Inventory.Count").build(),
                request().setFileContainingSymbol(PKG + "Item.Part").build(),
                request().setFileContainingSymbol(PKG + "Item.Kind").build(),
                request().setFileContainingSymbol(PKG + "weight").build(),
                request().setFileContainingSymbol(PKG + "Total").build());
        for (int i = 0; i < 5; i++) {
            assertEquals(List.of(INVENTORY_FILE, TOTALS_FILE), fileNames(answers.get(i)), "answer " + i);
        }
        assertEquals(List.of(TOTALS_FILE), fileNames(answers.get(5)));
        FileDescriptorProto inventory = FileDescriptorProto.parseFrom(
                answers.getFirst().getFileDescriptorResponse().getFileDescriptorProto(0));
        assertEquals("Count", inventory.getService(0).getMethod(0).getName());
        assertEquals("." + PKG + "Item", inventory.getService(0).getMethod(0).getInputType());
    }

    @Test
    void filesByNameAndByExtension() throws Exception {
        List<ServerReflectionResponse> answers = ask(
                request().setFileByFilename(TOTALS_FILE).build(),
                request().setFileByFilename(INVENTORY_FILE).build(),
                request().setFileContainingExtension(ExtensionRequest.newBuilder().setContainingType(PKG + "Item")
                        .setExtensionNumber(101)).build());
        assertEquals(List.of(TOTALS_FILE), fileNames(answers.get(0)));
        assertEquals(List.of(INVENTORY_FILE, TOTALS_FILE), fileNames(answers.get(1)));
        assertEquals(List.of(INVENTORY_FILE, TOTALS_FILE), fileNames(answers.get(2)));
    }

    @Test
    void extensionNumbersOfAType() throws Exception {
        List<ServerReflectionResponse> answers = ask(
                request().setAllExtensionNumbersOfType(PKG + "Item").build(),
                request().setAllExtensionNumbersOfType(PKG + "Total").build());
        assertEquals(PKG + "Item", answers.get(0).getAllExtensionNumbersResponse().getBaseTypeName());
        assertEquals(List.of(100, 101), answers.get(0).getAllExtensionNumbersResponse().getExtensionNumberList());
        assertEquals(List.of(), answers.get(1).getAllExtensionNumbersResponse().getExtensionNumberList(),
                "a known type without extensions has none");
    }

    @Test
    void unknownNamesAreNotFoundAndTheStreamGoesOn() throws Exception {
        List<ServerReflectionResponse> answers = ask(
                request().setFileByFilename("no/such.proto").build(),
                request().setFileContainingSymbol(PKG + "NoSuch").build(),
                request().setFileContainingSymbol("plain.NoSchema").build(),
                request().setFileContainingExtension(ExtensionRequest.newBuilder().setContainingType(PKG + "Item")
                        .setExtensionNumber(150)).build(),
                request().setAllExtensionNumbersOfType(PKG + "NoSuch").build(),
                request().build(),
                request().setListServices("").build());
        for (int i = 0; i < 5; i++) {
            assertError(Status.Code.NOT_FOUND, answers.get(i));
        }
        assertError(Status.Code.UNIMPLEMENTED, answers.get(5));
        assertTrue(answers.get(6).hasListServicesResponse(), "answered after the errors");
    }

    @Test
    void v1alphaGivesTheSameAnswers() throws Exception {
        Answers<dev.rdmarpc.reflection.v1alpha.ServerReflectionResponse> answers = new Answers<>();
        StreamObserver<dev.rdmarpc.reflection.v1alpha.ServerReflectionRequest> out =
                dev.rdmarpc.reflection.v1alpha.ServerReflectionRpc.newStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS)
                        .serverReflectionInfo(answers);
        out.onNext(dev.rdmarpc.reflection.v1alpha.ServerReflectionRequest.newBuilder().setListServices("").build());
        out.onNext(dev.rdmarpc.reflection.v1alpha.ServerReflectionRequest.newBuilder()
                .setFileContainingSymbol(PKG + "Inventory.Watch").build());
        out.onCompleted();
        List<dev.rdmarpc.reflection.v1alpha.ServerReflectionResponse> got = answers.done.get(60, TimeUnit.SECONDS);
        assertEquals(3, got.get(0).getListServicesResponse().getServiceCount());
        assertEquals(2, got.get(1).getFileDescriptorResponse().getFileDescriptorProtoCount());
        assertEquals(INVENTORY_FILE, FileDescriptorProto.parseFrom(
                got.get(1).getFileDescriptorResponse().getFileDescriptorProto(0)).getName());
    }
}
