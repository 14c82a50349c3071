package dev.rdmarpc.codegen;

import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.MethodDescriptorProto;
import com.google.protobuf.DescriptorProtos.ServiceDescriptorProto;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes the {@code <Service>Rpc} class of one service: method descriptors, the async, blocking and
 * future stubs, and the {@code ImplBase} a server implements. Every rdmarpc and JDK type is
 * written fully qualified so that no message name of the user's can shadow it.
 */
final class ServiceGenerator {
    private static final String CORE = "dev.rdmarpc.core.";
    private static final String METHOD_DESCRIPTOR = CORE + "MethodDescriptor";
    private static final String METHOD_TYPE = METHOD_DESCRIPTOR + ".MethodType";
    private static final String CHANNEL = CORE + "Channel";
    private static final String CALL_OPTIONS = CORE + "CallOptions";
    private static final String STREAM_OBSERVER = CORE + "StreamObserver";
    private static final String CLIENT_CALLS = CORE + "ClientCalls";
    private static final String SERVER_CALLS = CORE + "ServerCalls";
    private static final String PROTO_MARSHALLER = CORE + "protobuf.ProtoMarshaller";
    private static final String WITH_ATTACHMENT = CORE + "WithAttachment";
    private static final String ATTACHMENT_CALLS = CORE + "AttachmentCalls";
    /** Suffix of the generated methods whose messages carry attachments. */
    static final String ATTACHMENT_SUFFIX = "WithAttachment";

    /** The class-name suffix of generated service classes. */
    static final String CLASS_SUFFIX = "Rpc";

    private final FileDescriptorProto file;
    private final ServiceDescriptorProto service;
    private final int serviceIndex;
    private final Comments comments;
    private final String javaPackage;
    private final String className;
    private final String serviceName;
    private final boolean serviceDeprecated;
    private final List<Method> methods = new ArrayList<>();

    /** One rpc, with the Java names the generated code uses for it. */
    private record Method(MethodDescriptorProto proto, int index, String javaName, String getter,
                          String request, String response, boolean deprecated) {
        boolean clientStreaming() {
            return proto.getClientStreaming();
        }

        boolean serverStreaming() {
            return proto.getServerStreaming();
        }

        String kind() {
            if (clientStreaming()) {
                return serverStreaming() ? "BidiStreaming" : "ClientStreaming";
            }
            return serverStreaming() ? "ServerStreaming" : "Unary";
        }

        String methodType() {
            if (clientStreaming()) {
                return serverStreaming() ? "BIDI_STREAMING" : "CLIENT_STREAMING";
            }
            return serverStreaming() ? "SERVER_STREAMING" : "UNARY";
        }

        String descriptorType() {
            return METHOD_DESCRIPTOR + "<" + request + ", " + response + ">";
        }
    }

    ServiceGenerator(FileDescriptorProto file, int serviceIndex, MessageTypes types, Comments comments) {
        this.file = file;
        this.service = file.getService(serviceIndex);
        this.serviceIndex = serviceIndex;
        this.comments = comments;
        this.javaPackage = JavaNames.javaPackage(file);
        this.className = service.getName() + CLASS_SUFFIX;
        this.serviceName = JavaNames.join(file.getPackage(), service.getName());
        this.serviceDeprecated = service.getOptions().getDeprecated();
        Map<String, String> javaNamesSeen = new HashMap<>();
        for (int i = 0; i < service.getMethodCount(); i++) {
            MethodDescriptorProto m = service.getMethod(i);
            String javaName = JavaNames.methodName(m.getName());
            String getter = JavaNames.descriptorGetterName(m.getName());
            requireUnique(javaNamesSeen, javaName, m.getName(), "Java method name");
            requireUnique(javaNamesSeen, attachmentName(javaName), m.getName(), "Java method name");
            requireUnique(javaNamesSeen, getter + "()", m.getName(), "descriptor getter");
            methods.add(new Method(m, i, javaName, getter,
                    types.javaName(m.getInputType()), types.javaName(m.getOutputType()),
                    m.getOptions().getDeprecated()));
        }
    }

    /** The name of an rpc's attachment-aware method: its Java name (without a keyword's escape) and the suffix. */
    private static String attachmentName(String javaName) {
        String base = javaName.endsWith("_") ? javaName.substring(0, javaName.length() - 1) : javaName;
        return base + ATTACHMENT_SUFFIX;
    }

    /** Fails when another rpc of the service already maps to {@code javaName}. */
    private void requireUnique(Map<String, String> seen, String javaName, String rpc, String what) {
        String clash = seen.putIfAbsent(javaName, rpc);
        if (clash != null) {
            throw new CodeGenerationException(file.getName() + ": service " + serviceName + ": rpcs " + clash + " and "
                    + rpc + " both map to the " + what + " " + javaName);
        }
    }

    /** Path of the generated file inside the output directory, e.g. {@code com/example/KvRpc.java}. */
    String fileName() {
        String dir = javaPackage.isEmpty() ? "" : javaPackage.replace('.', '/') + "/";
        return dir + className + ".java";
    }

    /** The source of the generated class. */
    String generate() {
        SourceWriter w = new SourceWriter();
        w.line("// Generated by the rdmarpc protoc plugin (dev.rdmarpc:codegen). DO NOT EDIT!");
        w.line("// source: " + file.getName());
        if (!javaPackage.isEmpty()) {
            w.blank();
            w.line("package " + javaPackage + ";");
        }
        w.blank();
        w.javadoc("rdmarpc stubs, descriptors and server base class of the service {@code " + serviceName + "}.",
                comments.service(serviceIndex));
        deprecated(w, serviceDeprecated);
        w.open("public final class " + className + " {");
        w.blank();
        w.javadoc("The full name of the service.", List.of());
        w.line("public static final java.lang.String SERVICE_NAME = \"" + serviceName + "\";");
        w.blank();
        w.open("private " + className + "() {");
        w.close("}");

        for (Method m : methods) {
            methodDescriptor(w, m);
        }
        stubFactories(w);
        implBase(w);
        asyncStub(w);
        blockingStub(w);
        futureStub(w);
        w.close("}");
        return w.toString();
    }

    private static void deprecated(SourceWriter w, boolean deprecated) {
        if (deprecated) {
            w.line("@java.lang.Deprecated");
        }
    }

    private String qualified(Method m) {
        return className + "." + m.getter + "()";
    }

    private void methodDescriptor(SourceWriter w, Method m) {
        w.blank();
        w.line("private static volatile " + m.descriptorType() + " " + m.getter + ";");
        w.blank();
        w.javadoc("The descriptor of {@code " + serviceName + "/" + m.proto.getName() + "}, a "
                + m.methodType().toLowerCase(java.util.Locale.ROOT).replace('_', '-') + " call.", List.of());
        deprecated(w, m.deprecated);
        w.open("public static " + m.descriptorType() + " " + m.getter + "() {");
        w.line(m.descriptorType() + " " + m.getter + ";");
        w.open("if ((" + m.getter + " = " + className + "." + m.getter + ") == null) {");
        w.open("synchronized (" + className + ".class) {");
        w.open("if ((" + m.getter + " = " + className + "." + m.getter + ") == null) {");
        w.line(className + "." + m.getter + " = " + m.getter + " = " + METHOD_DESCRIPTOR + ".<" + m.request + ", " + m.response + ">newBuilder()");
        w.line("        .setType(" + METHOD_TYPE + "." + m.methodType() + ")");
        w.line("        .setFullMethodName(" + METHOD_DESCRIPTOR + ".generateFullMethodName(SERVICE_NAME, \"" + m.proto.getName() + "\"))");
        w.line("        .setRequestMarshaller(" + PROTO_MARSHALLER + ".of(" + m.request + ".getDefaultInstance()))");
        w.line("        .setResponseMarshaller(" + PROTO_MARSHALLER + ".of(" + m.response + ".getDefaultInstance()))");
        w.line("        .build();");
        w.close("}");
        w.close("}");
        w.close("}");
        w.line("return " + m.getter + ";");
        w.close("}");
    }

    private String stub(String kind) {
        return service.getName() + kind + "Stub";
    }

    private String implBaseName() {
        return service.getName() + "ImplBase";
    }

    private void stubFactories(SourceWriter w) {
        String[][] factories = {
                {"newStub", "", "an async stub: responses arrive on a {@link " + STREAM_OBSERVER + "}, every call kind is supported."},
                {"newBlockingStub", "Blocking", "a blocking stub: unary and server-streaming calls that wait on the calling thread."},
                {"newFutureStub", "Future", "a future stub: unary calls that return a {@link java.util.concurrent.CompletableFuture}."},
        };
        for (String[] f : factories) {
            w.blank();
            w.javadoc("Creates " + f[2], List.of());
            w.open("public static " + stub(f[1]) + " " + f[0] + "(" + CHANNEL + " channel) {");
            w.line("return new " + stub(f[1]) + "(channel, " + CALL_OPTIONS + ".DEFAULT);");
            w.close("}");
        }
    }

    private void implBase(SourceWriter w) {
        w.blank();
        w.javadoc("Base class of an implementation of {@code " + serviceName + "}: override the methods the service"
                + " implements; the others fail with UNIMPLEMENTED.", comments.service(serviceIndex));
        deprecated(w, serviceDeprecated);
        w.open("public abstract static class " + implBaseName() + " implements " + CORE + "BindableService {");
        for (Method m : methods) {
            w.blank();
            w.javadoc("Handles {@code " + m.proto.getName() + "}.", comments.method(serviceIndex, m.index));
            deprecated(w, m.deprecated);
            if (m.clientStreaming()) {
                w.open("public " + observer(m.request) + " " + m.javaName + "(" + observer(m.response) + " responseObserver) {");
                w.line("return " + SERVER_CALLS + ".asyncUnimplementedStreamingCall(" + qualified(m) + ", responseObserver);");
            } else {
                w.open("public void " + m.javaName + "(" + m.request + " request, " + observer(m.response) + " responseObserver) {");
                w.line(SERVER_CALLS + ".asyncUnimplementedUnaryCall(" + qualified(m) + ", responseObserver);");
            }
            w.close("}");
            implBaseWithAttachment(w, m);
        }
        w.blank();
        w.line("@java.lang.Override");
        w.open("public final " + CORE + "ServiceDefinition bindService() {");
        if (methods.isEmpty()) {
            w.line("return " + CORE + "ServiceDefinition.builder(SERVICE_NAME).build();");
        } else {
            w.line("return " + CORE + "ServiceDefinition.builder(SERVICE_NAME)");
            for (Method m : methods) {
                String attached = withAttachment(m.request);
                String attachedResponse = withAttachment(m.response);
                w.line("        .addMethod(" + qualified(m) + ", overrides(\"" + attachmentName(m.javaName) + "\")");
                w.line("                ? " + ATTACHMENT_CALLS + ".server(" + SERVER_CALLS + ".<" + attached + ", " + attachedResponse
                        + ">async" + m.kind() + "Call(this::" + attachmentName(m.javaName) + "))");
                w.line("                : " + SERVER_CALLS + ".<" + m.request + ", " + m.response
                        + ">async" + m.kind() + "Call(this::" + m.javaName + "))");
            }
            w.line("        .build();");
        }
        w.close("}");
        w.blank();
        w.javadoc("Whether the implementation overrides {@code method} (an attachment-aware handler).", List.of());
        w.open("private boolean overrides(java.lang.String method) {");
        w.open("for (java.lang.Class<?> c = getClass(); c != " + implBaseName() + ".class; c = c.getSuperclass()) {");
        w.open("for (java.lang.reflect.Method declared : c.getDeclaredMethods()) {");
        w.open("if (declared.getName().equals(method)) {");
        w.line("return true;");
        w.close("}");
        w.close("}");
        w.close("}");
        w.line("return false;");
        w.close("}");
        w.close("}");
    }

    private static String withAttachment(String type) {
        return WITH_ATTACHMENT + "<" + type + ">";
    }

    /**
     * The attachment-aware handler of one rpc: overriding it makes the service receive and send attachments for that
     * rpc; the default hands the plain handler the message (its attachment released).
     */
    private void implBaseWithAttachment(SourceWriter w, Method m) {
        w.blank();
        w.javadoc("Handles {@code " + m.proto.getName() + "} with the attachments beside its messages; override it"
                + " instead of {@code " + m.javaName + "} to receive and send them. The default releases each request's"
                + " attachment and calls {@code " + m.javaName + "}.", List.of());
        deprecated(w, m.deprecated);
        String name = attachmentName(m.javaName);
        if (m.clientStreaming()) {
            w.open("public " + observer(withAttachment(m.request)) + " " + name + "(" + observer(withAttachment(m.response))
                    + " responseObserver) {");
            w.line("return " + ATTACHMENT_CALLS + ".withoutAttachments(" + m.javaName + "(" + ATTACHMENT_CALLS
                    + ".plain(responseObserver)));");
        } else {
            w.open("public void " + name + "(" + withAttachment(m.request) + " request, "
                    + observer(withAttachment(m.response)) + " responseObserver) {");
            w.line("request.release();");
            w.line(m.javaName + "(request.message(), " + ATTACHMENT_CALLS + ".plain(responseObserver));");
        }
        w.close("}");
    }

    private static String observer(String type) {
        return STREAM_OBSERVER + "<" + type + ">";
    }

    private void stubClassStart(SourceWriter w, String name, String summary) {
        w.blank();
        w.javadoc(summary, List.of());
        deprecated(w, serviceDeprecated);
        w.open("public static final class " + name + " extends " + CORE + "AbstractStub<" + name + "> {");
        w.open("private " + name + "(" + CHANNEL + " channel, " + CALL_OPTIONS + " callOptions) {");
        w.line("super(channel, callOptions);");
        w.close("}");
        w.blank();
        w.line("@java.lang.Override");
        w.open("protected " + name + " build(" + CHANNEL + " channel, " + CALL_OPTIONS + " callOptions) {");
        w.line("return new " + name + "(channel, callOptions);");
        w.close("}");
    }

    private String newCall(Method m) {
        return "getChannel().newCall(" + qualified(m) + ", getCallOptions())";
    }

    private void asyncStub(SourceWriter w) {
        stubClassStart(w, stub(""), "Async stub of {@code " + serviceName + "}: results arrive on observers.");
        for (Method m : methods) {
            w.blank();
            w.javadoc("Starts a " + kindText(m) + " call of {@code " + m.proto.getName() + "}.", comments.method(serviceIndex, m.index));
            deprecated(w, m.deprecated);
            if (m.clientStreaming()) {
                w.open("public " + observer(m.request) + " " + m.javaName + "(" + observer(m.response) + " responseObserver) {");
                w.line("return " + CLIENT_CALLS + ".async" + m.kind() + "Call(" + newCall(m) + ", responseObserver);");
            } else {
                w.open("public void " + m.javaName + "(" + m.request + " request, " + observer(m.response) + " responseObserver) {");
                // a unary call made from the channel itself: core may run it on a recycled call object
                String target = m.kind().equals("Unary") ? "getChannel(), " + qualified(m) + ", getCallOptions()" : newCall(m);
                w.line(CLIENT_CALLS + ".async" + m.kind() + "Call(" + target + ", request, responseObserver);");
            }
            w.close("}");
            asyncStubWithAttachment(w, m);
        }
        w.close("}");
    }

    /** The async stub's method whose messages carry attachments (sent from the caller's memory, received as views). */
    private void asyncStubWithAttachment(SourceWriter w, Method m) {
        w.blank();
        w.javadoc("Starts a " + kindText(m) + " call of {@code " + m.proto.getName() + "} whose messages carry"
                + " attachments; whoever receives one releases it.", List.of());
        deprecated(w, m.deprecated);
        String call = ATTACHMENT_CALLS + ".client(" + newCall(m) + ")";
        String name = attachmentName(m.javaName);
        if (m.clientStreaming()) {
            w.open("public " + observer(withAttachment(m.request)) + " " + name + "(" + observer(withAttachment(m.response))
                    + " responseObserver) {");
            w.line("return " + CLIENT_CALLS + ".async" + m.kind() + "Call(" + call + ", responseObserver);");
        } else {
            w.open("public void " + name + "(" + withAttachment(m.request) + " request, "
                    + observer(withAttachment(m.response)) + " responseObserver) {");
            w.line(CLIENT_CALLS + ".async" + m.kind() + "Call(" + call + ", request, responseObserver);");
        }
        w.close("}");
    }

    private void blockingStub(SourceWriter w) {
        stubClassStart(w, stub("Blocking"), "Blocking stub of {@code " + serviceName + "}: unary and server-streaming calls"
                + " on the calling thread; failures throw {@link " + CORE + "StatusException}.");
        for (Method m : methods) {
            if (m.clientStreaming()) {
                continue;
            }
            w.blank();
            w.javadoc("Makes a " + kindText(m) + " call of {@code " + m.proto.getName() + "} and waits for "
                    + (m.serverStreaming() ? "each response as the iterator is read." : "the response."),
                    comments.method(serviceIndex, m.index));
            deprecated(w, m.deprecated);
            if (m.serverStreaming()) {
                w.open("public java.util.Iterator<" + m.response + "> " + m.javaName + "(" + m.request + " request) {");
                w.line("return " + CLIENT_CALLS + ".blockingServerStreamingCall(getChannel(), " + qualified(m) + ", getCallOptions(), request);");
            } else {
                w.open("public " + m.response + " " + m.javaName + "(" + m.request + " request) {");
                w.line("return " + CLIENT_CALLS + ".blockingUnaryCall(getChannel(), " + qualified(m) + ", getCallOptions(), request);");
            }
            w.close("}");
        }
        w.close("}");
    }

    private void futureStub(SourceWriter w) {
        stubClassStart(w, stub("Future"), "Future stub of {@code " + serviceName + "}: unary calls as futures;"
                + " cancelling a future cancels its call.");
        for (Method m : methods) {
            if (m.clientStreaming() || m.serverStreaming()) {
                continue;
            }
            w.blank();
            w.javadoc("Starts a unary call of {@code " + m.proto.getName() + "}.", comments.method(serviceIndex, m.index));
            deprecated(w, m.deprecated);
            w.open("public java.util.concurrent.CompletableFuture<" + m.response + "> " + m.javaName + "(" + m.request + " request) {");
            w.line("return " + CLIENT_CALLS + ".futureUnaryCall(" + newCall(m) + ", request);");
            w.close("}");
        }
        w.close("}");
    }

    private static String kindText(Method m) {
        return switch (m.methodType()) {
            case "UNARY" -> "unary";
            case "CLIENT_STREAMING" -> "client-streaming";
            case "SERVER_STREAMING" -> "server-streaming";
            default -> "bidi-streaming";
        };
    }
}
