package dev.rdmarpc.codegen.tests;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every generated name that has a grpc-java counterpart is grpc-java's: for each service of the test protos, the
 * {@code <Service>Grpc} class grpc-java's own generator (protoc-gen-grpc-java, run by this module's build on the same
 * protos) wrote is compared by reflection with our {@code <Service>Rpc}: the service name constant, the descriptor
 * getters (and the full names and types they return), the stub factories, the stub and ImplBase class names, and
 * the methods of each stub and of the server base. Only Echo, for which the build asks for attachment methods, has
 * methods beyond grpc-java's (its {@code ...WithAttachment} twins): every other service has exactly grpc-java's shape.
 */
class GrpcJavaNamesTest {
    private static final Path GRPC_SOURCES = Path.of("target", "generated-test-sources", "grpc-java");
    /** The one compared service whose rpcs get attachment methods (the plugin's attachments= option in the pom). */
    private static final String WITH_ATTACHMENTS = "EchoRpc";

    /** The class names (without the Grpc suffix) of every service grpc-java's generator wrote. */
    private static List<String> services() throws IOException {
        assertTrue(Files.isDirectory(GRPC_SOURCES), "grpc-java's generated sources are in " + GRPC_SOURCES.toAbsolutePath());
        try (Stream<Path> files = Files.walk(GRPC_SOURCES)) {
            return files.map(p -> GRPC_SOURCES.relativize(p).toString())
                    .filter(p -> p.endsWith("Grpc.java"))
                    .map(p -> p.substring(0, p.length() - "Grpc.java".length()).replace('/', '.').replace('\\', '.'))
                    .sorted()
                    .toList();
        }
    }

    @Test
    void everyServiceOfTheTestProtosIsCompared() throws IOException {
        List<String> services = services();
        assertTrue(services.contains("dev.rdmarpc.codegen.tests.names.stats_service"), services.toString());
        assertTrue(services.contains("dev.rdmarpc.codegen.tests.echo.Echo"), services.toString());
        assertTrue(services.contains("dev.rdmarpc.codegen.tests.legacy.Legacy"), services.toString());
        assertEquals(13, services.size(), services.toString());
    }

    @Test
    void generatedNamesAreGrpcJavas() throws Exception {
        List<String> differences = new ArrayList<>();
        for (String service : services()) {
            compare(Class.forName(service + "Grpc"), Class.forName(service + "Rpc"), differences);
        }
        assertTrue(differences.isEmpty(), "names that differ from grpc-java's:\n" + String.join("\n", differences));
    }

    private static void compare(Class<?> grpc, Class<?> ours, List<String> differences) throws Exception {
        String where = ours.getSimpleName() + " vs " + grpc.getSimpleName();
        same(differences, where + ": SERVICE_NAME", grpc.getField("SERVICE_NAME").get(null), ours.getField("SERVICE_NAME").get(null));

        List<String> grpcGetters = descriptorGetters(grpc);
        same(differences, where + ": descriptor getters", grpcGetters, descriptorGetters(ours));
        for (String getter : grpcGetters) {
            Method ourGetter = find(ours, getter);
            if (ourGetter == null) {
                continue; // reported above
            }
            Object grpcDescriptor = grpc.getMethod(getter).invoke(null);
            Object ourDescriptor = ourGetter.invoke(null);
            same(differences, where + ": " + getter + "() full name", call(grpcDescriptor, "getFullMethodName"), call(ourDescriptor, "getFullMethodName"));
            same(differences, where + ": " + getter + "() type", String.valueOf(call(grpcDescriptor, "getType")), String.valueOf(call(ourDescriptor, "getType")));
        }

        for (String factory : List.of("newStub", "newBlockingStub", "newFutureStub")) {
            Method g = find(grpc, factory);
            Method o = find(ours, factory);
            assertNotNull(g, grpc + "." + factory);
            if (o == null) {
                differences.add(where + ": no " + factory);
                continue;
            }
            same(differences, where + ": " + factory + " returns", g.getReturnType().getSimpleName(), o.getReturnType().getSimpleName());
        }

        String name = ours.getSimpleName().substring(0, ours.getSimpleName().length() - "Rpc".length());
        for (String stub : List.of("Stub", "BlockingStub", "FutureStub")) {
            Class<?> g = nested(grpc, name + stub);
            Class<?> o = nested(ours, name + stub);
            assertNotNull(g, grpc + " has " + name + stub);
            if (o == null) {
                differences.add(where + ": no class " + name + stub);
                continue;
            }
            same(differences, where + ": methods of " + name + stub, publicMethods(g), ourMethods(o));
        }

        Class<?> grpcBase = nested(grpc, name + "ImplBase");
        Class<?> ourBase = nested(ours, name + "ImplBase");
        assertNotNull(grpcBase, grpc + " has " + name + "ImplBase");
        if (ourBase == null) {
            differences.add(where + ": no class " + name + "ImplBase");
        } else {
            // grpc-java declares the handler methods on AsyncService, which its ImplBase implements
            List<String> ourHandlers = new ArrayList<>(ourMethods(ourBase));
            ourHandlers.remove("bindService(0)");
            same(differences, where + ": handler methods of " + name + "ImplBase", publicMethods(nested(grpc, "AsyncService")), ourHandlers);
        }
    }

    /** Public static no-argument methods named get…Method: the descriptor getters. */
    private static List<String> descriptorGetters(Class<?> c) {
        return Arrays.stream(c.getDeclaredMethods())
                .filter(m -> Modifier.isStatic(m.getModifiers()) && Modifier.isPublic(m.getModifiers()) && m.getParameterCount() == 0)
                .map(Method::getName)
                .filter(n -> n.startsWith("get") && n.endsWith("Method"))
                .sorted()
                .toList();
    }

    /** Public instance methods a class declares, as name(parameter count), sorted. */
    private static List<String> publicMethods(Class<?> c) {
        return publicMethods(c, false);
    }

    /**
     * The public methods of one of our nested classes; for the service with attachment methods, without those
     * (whose messages are {@code WithAttachment}), which grpc-java has no counterpart of.
     */
    private static List<String> ourMethods(Class<?> c) {
        return publicMethods(c, c.getEnclosingClass().getSimpleName().equals(WITH_ATTACHMENTS));
    }

    private static List<String> publicMethods(Class<?> c, boolean withoutAttachmentMethods) {
        return Arrays.stream(c.getDeclaredMethods())
                .filter(m -> Modifier.isPublic(m.getModifiers()) && !Modifier.isStatic(m.getModifiers()) && !m.isSynthetic() && !m.isBridge())
                .filter(m -> !withoutAttachmentMethods || !m.toGenericString().contains(dev.rdmarpc.core.WithAttachment.class.getName()))
                .map(m -> m.getName() + "(" + m.getParameterCount() + ")")
                .sorted()
                .toList();
    }

    private static Method find(Class<?> c, String name) {
        return Arrays.stream(c.getMethods()).filter(m -> m.getName().equals(name) && Modifier.isStatic(m.getModifiers()))
                .findFirst().orElse(null);
    }

    private static Class<?> nested(Class<?> c, String simpleName) {
        return Arrays.stream(c.getDeclaredClasses()).filter(n -> n.getSimpleName().equals(simpleName)).findFirst().orElse(null);
    }

    private static Object call(Object target, String method) throws Exception {
        return target.getClass().getMethod(method).invoke(target);
    }

    private static void same(List<String> differences, String what, Object grpc, Object ours) {
        if (!grpc.equals(ours)) {
            differences.add(what + ": grpc-java " + grpc + ", rdmarpc " + ours);
        }
    }
}
