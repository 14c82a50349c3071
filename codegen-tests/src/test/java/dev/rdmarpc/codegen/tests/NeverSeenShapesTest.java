package dev.rdmarpc.codegen.tests;

import dev.rdmarpc.codegen.tests.deprecations.Deprecations;
import dev.rdmarpc.codegen.tests.deprecations.GoneRpc;
import dev.rdmarpc.codegen.tests.deprecations.OnlyTypesRpc;
import dev.rdmarpc.codegen.tests.deprecations.RpcsRpc;
import dev.rdmarpc.codegen.tests.edition2023.Edition2023;
import dev.rdmarpc.codegen.tests.edition2023.Edition2023ServiceRpc;
import dev.rdmarpc.codegen.tests.legacy.LegacyOuterClass;
import dev.rdmarpc.codegen.tests.legacy.LegacyRpc;
import dev.rdmarpc.codegen.tests.stubnames.LookupBlockingStub;
import dev.rdmarpc.codegen.tests.stubnames.LookupRpc;
import dev.rdmarpc.codegen.tests.stubnames.LookupStub;
import dev.rdmarpc.core.BindableService;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.StreamObserver;
import example.shadowing.Channel;
import example.shadowing.ShadowRpc;
import example.shadowing.dev;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Services of shapes a new user brings: messages named like the packages and classes generated code names (dev, io,
 * Object, Channel, Status, String, ...), messages named like the generated nested classes, proto2 groups and
 * extensions, edition 2023, and deprecated rpcs, services and types, three services in one file. Each is called
 * over loopback; LintTest compiles all of them without a warning.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NeverSeenShapesTest {
    private Loopback loopback;
    private RpcChannel channel;

    private void serve(BindableService service) throws IOException {
        loopback = Loopback.serve(service);
        channel = loopback.channel();
    }

    @AfterEach
    void stop() {
        if (loopback != null) {
            loopback.close();
        }
    }

    @Test
    void messagesNamedLikePackagesAndClassesOfGeneratedCode() throws Exception {
        serve(new ShadowRpc.ShadowImplBase() {
            @Override
            public void echo(dev request, StreamObserver<example.shadowing.Object> responseObserver) {
                responseObserver.onNext(example.shadowing.Object.newBuilder().setText(request.getText() + "!").build());
                responseObserver.onCompleted();
            }

            @Override
            public void observe(Channel request, StreamObserver<example.shadowing.StreamObserver> responseObserver) {
                responseObserver.onNext(example.shadowing.StreamObserver.newBuilder().setText(request.getText()).build());
                responseObserver.onCompleted();
            }
        });
        ShadowRpc.ShadowBlockingStub stub = ShadowRpc.newBlockingStub(channel);
        assertEquals("hi!", stub.echo(dev.newBuilder().setText("hi").build()).getText());
        assertEquals("c", stub.observe(Channel.newBuilder().setText("c").build()).getText());

        String source = Files.readString(Path.of("target/generated-test-sources/protobuf/example/shadowing/ShadowRpc.java"));
        assertTrue(source.contains("\nimport dev.rdmarpc.core.Channel;\n"), "a message dev obscures dev.rdmarpc: imported");
        assertTrue(source.contains("(example.shadowing.Channel request"), "the message Channel stays fully qualified");
    }

    @Test
    void messagesNamedLikeTheGeneratedNestedClasses() throws Exception {
        serve(new LookupRpc.LookupImplBase() {
            @Override
            public void find(LookupStub request, StreamObserver<LookupBlockingStub> responseObserver) {
                responseObserver.onNext(LookupBlockingStub.newBuilder().setKey(request.getKey()).build());
                responseObserver.onCompleted();
            }
        });
        assertEquals("k", LookupRpc.newBlockingStub(channel).find(LookupStub.newBuilder().setKey("k").build()).getKey());
    }

    @Test
    void proto2GroupsAndExtensions() throws Exception {
        serve(new LegacyRpc.LegacyImplBase() {
            @Override
            public void search(LegacyOuterClass.Query request, StreamObserver<LegacyOuterClass.Query.Result> responseObserver) {
                // parsed without an extension registry, the extension arrives as an unknown field
                int priority = request.getUnknownFields().hasField(LegacyOuterClass.PRIORITY_FIELD_NUMBER) ? 10 : 0;
                responseObserver.onNext(LegacyOuterClass.Query.Result.newBuilder()
                        .setHits(request.getText().length() + priority).build());
                responseObserver.onCompleted();
            }
        });
        LegacyOuterClass.Query query = LegacyOuterClass.Query.newBuilder().setText("abc")
                .setExtension(LegacyOuterClass.priority, 10).build();
        assertEquals(13, LegacyRpc.newBlockingStub(channel).search(query).getHits());
    }

    @Test
    void edition2023() throws Exception {
        serve(new Edition2023ServiceRpc.Edition2023ServiceImplBase() {
            @Override
            public void get(Edition2023.Request request, StreamObserver<Edition2023.Reply> responseObserver) {
                responseObserver.onNext(Edition2023.Reply.newBuilder().addValues(request.getCount()).build());
                responseObserver.onCompleted();
            }
        });
        Edition2023.Reply reply = Edition2023ServiceRpc.newBlockingStub(channel)
                .get(Edition2023.Request.newBuilder().setText("t").setCount(7).build());
        assertEquals(7, reply.getValues(0));
    }

    @Test
    @SuppressWarnings("deprecation")
    void deprecatedRpcsAndServicesAreMarkedAndDeprecatedTypesAreNot() throws Exception {
        assertTrue(RpcsRpc.RpcsBlockingStub.class.getMethod("stale", Deprecations.Current.class).isAnnotationPresent(Deprecated.class));
        assertTrue(RpcsRpc.class.getMethod("getStalestMethod").isAnnotationPresent(Deprecated.class));
        assertFalse(RpcsRpc.RpcsBlockingStub.class.getMethod("fresh", Deprecations.Current.class).isAnnotationPresent(Deprecated.class));
        assertTrue(GoneRpc.class.isAnnotationPresent(Deprecated.class));
        assertTrue(GoneRpc.GoneStub.class.isAnnotationPresent(Deprecated.class));
        // only the types are: the rpcs are not deprecated, the class just names the types without a warning
        assertFalse(OnlyTypesRpc.OnlyTypesBlockingStub.class.getMethod("take", Deprecations.Old.class).isAnnotationPresent(Deprecated.class));
        assertFalse(OnlyTypesRpc.class.isAnnotationPresent(Deprecated.class));
        String onlyTypes = Files.readString(Path.of("target/generated-test-sources/protobuf/dev/rdmarpc/codegen/tests/deprecations/OnlyTypesRpc.java"));
        assertTrue(onlyTypes.contains("@java.lang.SuppressWarnings(\"deprecation\")\npublic final class OnlyTypesRpc {"), "suppressed");
        String fresh = Files.readString(Path.of("target/generated-test-sources/protobuf/dev/rdmarpc/codegen/tests/echo/EchoRpc.java"));
        assertFalse(fresh.contains("SuppressWarnings"), "nothing suppressed where no type is deprecated");

        serve(new OnlyTypesRpc.OnlyTypesImplBase() {
            @Override
            public void take(Deprecations.Old request, StreamObserver<Deprecations.Current> responseObserver) {
                responseObserver.onNext(Deprecations.Current.newBuilder().setText(request.getText()).build());
                responseObserver.onCompleted();
            }
        });
        assertEquals("old", OnlyTypesRpc.newBlockingStub(channel).take(Deprecations.Old.newBuilder().setText("old").build()).getText());
    }
}
