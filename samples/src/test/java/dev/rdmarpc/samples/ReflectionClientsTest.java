package dev.rdmarpc.samples;

import com.google.protobuf.ByteString;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.DescriptorValidationException;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.DynamicMessage;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.testing.Await;
import dev.rdmarpc.grpc.RdmaChannelBuilder;
import dev.rdmarpc.grpc.RdmaServerBuilder;
import dev.rdmarpc.health.HealthService;
import dev.rdmarpc.samples.grpc.GreeterService;
import dev.rdmarpc.samples.kv.GetRequest;
import dev.rdmarpc.samples.kv.KeyValueGrpc;
import dev.rdmarpc.samples.kv.KeyValueStore;
import dev.rdmarpc.samples.kv.KvServer;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import io.grpc.reflection.v1.ServerReflectionGrpc;
import io.grpc.reflection.v1.ServerReflectionRequest;
import io.grpc.reflection.v1.ServerReflectionResponse;
import io.grpc.reflection.v1.ServiceResponse;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * grpc-java's own reflection client stubs (grpc-services' {@code ServerReflectionGrpc}) asking, over a stock
 * {@code NettyChannelBuilder} (HTTP/2) and over {@code RdmaChannelBuilder} (the rdmarpc protocol): the native KV server
 * with rdmarpc's {@code ReflectionService}, and the Greeter server ({@code RdmaServerBuilder}) with grpc-services'
 * {@code ProtoReflectionServiceV1}. Each lists the services, resolves a method's input type through
 * file_containing_symbol, and calls the method with a {@link DynamicMessage} built from those descriptors alone, as
 * grpcurl does.
 */
class ReflectionClientsTest {
    /** How the reflection client reaches the server. */
    enum Client {
        STOCK_NETTY_H2, RDMA_CHANNEL_BUILDER;

        ManagedChannel connect(int port) {
            return this == STOCK_NETTY_H2 ? StockGrpcClientsTest.stockChannel(port)
                    : RdmaChannelBuilder.forAddress("127.0.0.1", port).build();
        }
    }

    private long baseline;
    private RpcServer kvServer;
    private Server greeterServer;
    private final List<ManagedChannel> channels = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        baseline = SlabPool.shared().inUseBuffers();
        kvServer = KvServer.builder(0, new KeyValueStore(), new HealthService(), KvServer.DEFAULT_MAX_MESSAGE_MIB).build().start();
        greeterServer = RdmaServerBuilder.forPort(0).addService(new GreeterService())
                .addService(ProtoReflectionServiceV1.newInstance()).build().start();
    }

    @AfterEach
    void stop() throws Exception {
        for (ManagedChannel c : channels) {
            c.shutdownNow();
            c.awaitTermination(60, TimeUnit.SECONDS);
        }
        kvServer.shutdownNow();
        kvServer.awaitTermination(60, TimeUnit.SECONDS);
        greeterServer.shutdownNow();
        greeterServer.awaitTermination(60, TimeUnit.SECONDS);
        Await.until(() -> SlabPool.shared().inUseBuffers() == baseline, () -> "slab buffers in use back to " + baseline
                + ", not " + SlabPool.shared().inUseBuffers() + ":\n" + SlabPool.shared().describeLiveBuffers());
    }

    private ManagedChannel channel(Client client, int port) {
        ManagedChannel c = client.connect(port);
        channels.add(c);
        return c;
    }

    @ParameterizedTest
    @EnumSource(Client.class)
    void nativeServerDescribesItsServicesAndAMethodCallsFromTheDescriptors(Client client) throws Exception {
        ManagedChannel channel = channel(client, kvServer.getPort());
        List<String> listed = listServices(channel);
        assertTrue(listed.containsAll(List.of("rdmarpc.samples.kv.KeyValue", "grpc.health.v1.Health",
                "grpc.reflection.v1.ServerReflection")), () -> "listed: " + listed);

        MethodDescriptor put = method(channel, "rdmarpc.samples.kv.KeyValue", "Put");
        Descriptor input = put.getInputType();
        assertEquals("rdmarpc.samples.kv.PutRequest", input.getFullName());
        DynamicMessage request = DynamicMessage.newBuilder(input)
                .setField(input.findFieldByName("key"), ByteString.copyFromUtf8("k"))
                .setField(input.findFieldByName("value"), ByteString.copyFromUtf8("v"))
                .build();
        DynamicMessage response = callUnary(channel, put, request);
        assertEquals(1L, response.getField(put.getOutputType().findFieldByName("version")));
        assertEquals(ByteString.copyFromUtf8("v"), KeyValueGrpc.newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS)
                .get(GetRequest.newBuilder().setKey(ByteString.copyFromUtf8("k")).build()).getValue(),
                "the dynamic Put stored the value");
    }

    @ParameterizedTest
    @EnumSource(Client.class)
    void grpcServicesReflectionServesOnRdmaServerBuilder(Client client) throws Exception {
        ManagedChannel channel = channel(client, greeterServer.getPort());
        List<String> listed = listServices(channel);
        assertTrue(listed.containsAll(List.of("rdmarpc.samples.greeter.Greeter", "grpc.reflection.v1.ServerReflection")),
                () -> "listed: " + listed);
        MethodDescriptor sayHello = method(channel, "rdmarpc.samples.greeter.Greeter", "SayHello");
        Descriptor input = sayHello.getInputType();
        DynamicMessage reply = callUnary(channel, sayHello,
                DynamicMessage.newBuilder(input).setField(input.findFieldByName("name"), "reflection").build());
        String message = (String) reply.getField(sayHello.getOutputType().findFieldByName("message"));
        assertTrue(message.contains("reflection"), message);
    }

    private static List<String> listServices(ManagedChannel channel) throws Exception {
        ServerReflectionResponse r = ask(channel, ServerReflectionRequest.newBuilder().setListServices("").build());
        return r.getListServicesResponse().getServiceList().stream().map(ServiceResponse::getName).toList();
    }

    /** A method found as grpcurl finds it: the files of its service by file_containing_symbol, built into descriptors. */
    private static MethodDescriptor method(ManagedChannel channel, String service, String method) throws Exception {
        ServerReflectionResponse r = ask(channel, ServerReflectionRequest.newBuilder().setFileContainingSymbol(service).build());
        assertTrue(r.hasFileDescriptorResponse(), () -> "files of " + service + ", not " + r);
        Map<String, FileDescriptorProto> protos = new HashMap<>();
        for (ByteString bytes : r.getFileDescriptorResponse().getFileDescriptorProtoList()) {
            FileDescriptorProto p = FileDescriptorProto.parseFrom(bytes);
            protos.put(p.getName(), p);
        }
        FileDescriptorProto first = FileDescriptorProto.parseFrom(r.getFileDescriptorResponse().getFileDescriptorProto(0));
        FileDescriptor file = build(first, protos, new HashMap<>());
        MethodDescriptor found = file.findServiceByName(service.substring(service.lastIndexOf('.') + 1)).findMethodByName(method);
        assertNotNull(found, method + " in " + service);
        return found;
    }

    private static FileDescriptor build(FileDescriptorProto proto, Map<String, FileDescriptorProto> protos,
                                        Map<String, FileDescriptor> built) throws DescriptorValidationException {
        FileDescriptor done = built.get(proto.getName());
        if (done != null) {
            return done;
        }
        List<FileDescriptor> deps = new ArrayList<>();
        for (String dep : proto.getDependencyList()) {
            FileDescriptorProto p = protos.get(dep);
            assertNotNull(p, "the answer carries the dependency " + dep);
            deps.add(build(p, protos, built));
        }
        FileDescriptor file = FileDescriptor.buildFrom(proto, deps.toArray(new FileDescriptor[0]));
        built.put(proto.getName(), file);
        return file;
    }

    private static DynamicMessage callUnary(ManagedChannel channel, MethodDescriptor method, DynamicMessage request) {
        io.grpc.MethodDescriptor<DynamicMessage, DynamicMessage> call = io.grpc.MethodDescriptor.<DynamicMessage, DynamicMessage>newBuilder()
                .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
                .setFullMethodName(io.grpc.MethodDescriptor.generateFullMethodName(method.getService().getFullName(), method.getName()))
                .setRequestMarshaller(ProtoUtils.marshaller(DynamicMessage.getDefaultInstance(method.getInputType())))
                .setResponseMarshaller(ProtoUtils.marshaller(DynamicMessage.getDefaultInstance(method.getOutputType())))
                .build();
        return ClientCalls.blockingUnaryCall(channel, call, CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS), request);
    }

    /** One request on a reflection stream, its one answer. */
    private static ServerReflectionResponse ask(ManagedChannel channel, ServerReflectionRequest request)
            throws Exception {
        CompletableFuture<ServerReflectionResponse> answer = new CompletableFuture<>();
        StreamObserver<ServerReflectionRequest> out = ServerReflectionGrpc.newStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS)
                .serverReflectionInfo(new StreamObserver<>() {
                    @Override
                    public void onNext(ServerReflectionResponse value) {
                        answer.complete(value);
                    }

                    @Override
                    public void onError(Throwable t) {
                        answer.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                        answer.completeExceptionally(new AssertionError("the stream ended without an answer"));
                    }
                });
        out.onNext(request);
        out.onCompleted();
        return answer.get(60, TimeUnit.SECONDS);
    }
}
