package dev.rdmarpc.codegen;

import java.util.List;

/**
 * Writes a service's client stubs, shaped like grpc-java's: the async stub (every call kind, plus the
 * attachment-aware twin of each rpc that asked for one), the blocking stub (unary and server-streaming) and the
 * future stub (unary).
 */
final class StubWriter {
    private final ServiceClass s;
    private final TypeNames n;

    StubWriter(ServiceClass service) {
        this.s = service;
        this.n = service.names;
    }

    void write(SourceWriter w) {
        asyncStub(w);
        blockingStub(w);
        futureStub(w);
    }

    private void classStart(SourceWriter w, String name, String summary) {
        String channel = n.core("Channel");
        String callOptions = n.core("CallOptions");
        w.blank();
        w.javadoc(summary, List.of());
        s.deprecated(w, s.deprecated);
        w.open("public static final class " + name + " extends " + n.core("AbstractStub") + "<" + name + "> {");
        w.open("private " + name + "(" + channel + " channel, " + callOptions + " callOptions) {");
        w.line("super(channel, callOptions);");
        w.close("}");
        w.blank();
        s.override(w);
        w.open("protected " + name + " build(" + channel + " channel, " + callOptions + " callOptions) {");
        w.line("return new " + name + "(channel, callOptions);");
        w.close("}");
    }

    private String newCall(Rpc m) {
        return "this.getChannel().newCall(" + s.descriptor(m) + ", this.getCallOptions())";
    }

    private void asyncStub(SourceWriter w) {
        String clientCalls = n.core("ClientCalls");
        classStart(w, s.stub(""), "Async stub of {@code " + s.serviceName + "}: results arrive on observers.");
        for (Rpc m : s.rpcs) {
            w.blank();
            w.javadoc("Starts a " + m.kindText() + " call of {@code " + m.proto().getName() + "}.",
                    s.comments.method(s.index, m.index()));
            s.deprecated(w, m.deprecated());
            if (m.clientStreaming()) {
                w.open("public " + s.observer(m.request()) + " " + m.javaName() + "(" + s.observer(m.response())
                        + " responseObserver) {");
                w.line("return " + clientCalls + ".async" + m.kind() + "Call(" + newCall(m) + ", responseObserver);");
            } else {
                w.open("public void " + m.javaName() + "(" + m.request() + " request, " + s.observer(m.response())
                        + " responseObserver) {");
                // a unary call made from the channel itself: core may run it on a recycled call object
                String target = m.kind().equals("Unary")
                        ? "this.getChannel(), " + s.descriptor(m) + ", this.getCallOptions()" : newCall(m);
                w.line(clientCalls + ".async" + m.kind() + "Call(" + target + ", request, responseObserver);");
            }
            w.close("}");
            if (m.attachments()) {
                asyncWithAttachment(w, m);
            }
        }
        w.close("}");
    }

    /** The async stub's method whose messages carry attachments (sent from the caller's memory, received as views). */
    private void asyncWithAttachment(SourceWriter w, Rpc m) {
        w.blank();
        w.javadoc("Starts a " + m.kindText() + " call of {@code " + m.proto().getName() + "} whose messages carry"
                + " attachments; whoever receives one releases it.", List.of());
        s.deprecated(w, m.deprecated());
        String clientCalls = n.core("ClientCalls");
        String call = n.core("AttachmentCalls") + ".client(" + newCall(m) + ")";
        if (m.clientStreaming()) {
            w.open("public " + s.observer(s.withAttachment(m.request())) + " " + m.attachmentName() + "("
                    + s.observer(s.withAttachment(m.response())) + " responseObserver) {");
            w.line("return " + clientCalls + ".async" + m.kind() + "Call(" + call + ", responseObserver);");
        } else {
            w.open("public void " + m.attachmentName() + "(" + s.withAttachment(m.request()) + " request, "
                    + s.observer(s.withAttachment(m.response())) + " responseObserver) {");
            w.line(clientCalls + ".async" + m.kind() + "Call(" + call + ", request, responseObserver);");
        }
        w.close("}");
    }

    private void blockingStub(SourceWriter w) {
        String clientCalls = n.core("ClientCalls");
        classStart(w, s.stub("Blocking"), "Blocking stub of {@code " + s.serviceName + "}: unary and server-streaming"
                + " calls on the calling thread; failures throw {@link " + n.core("StatusException") + "}.");
        for (Rpc m : s.rpcs) {
            if (m.clientStreaming()) {
                continue;
            }
            w.blank();
            w.javadoc("Makes a " + m.kindText() + " call of {@code " + m.proto().getName() + "} and waits for "
                            + (m.serverStreaming() ? "each response as the iterator is read." : "the response."),
                    s.comments.method(s.index, m.index()));
            s.deprecated(w, m.deprecated());
            String target = "this.getChannel(), " + s.descriptor(m) + ", this.getCallOptions(), request";
            if (m.serverStreaming()) {
                w.open("public " + n.of("java.util", "Iterator") + "<" + m.response() + "> " + m.javaName() + "("
                        + m.request() + " request) {");
                w.line("return " + clientCalls + ".blockingServerStreamingCall(" + target + ");");
            } else {
                w.open("public " + m.response() + " " + m.javaName() + "(" + m.request() + " request) {");
                w.line("return " + clientCalls + ".blockingUnaryCall(" + target + ");");
            }
            w.close("}");
        }
        w.close("}");
    }

    private void futureStub(SourceWriter w) {
        classStart(w, s.stub("Future"), "Future stub of {@code " + s.serviceName + "}: unary calls as futures;"
                + " cancelling a future cancels its call.");
        for (Rpc m : s.rpcs) {
            if (m.clientStreaming() || m.serverStreaming()) {
                continue;
            }
            w.blank();
            w.javadoc("Starts a unary call of {@code " + m.proto().getName() + "}.", s.comments.method(s.index, m.index()));
            s.deprecated(w, m.deprecated());
            w.open("public " + n.of("java.util.concurrent", "CompletableFuture") + "<" + m.response() + "> "
                    + m.javaName() + "(" + m.request() + " request) {");
            w.line("return " + n.core("ClientCalls") + ".futureUnaryCall(" + newCall(m) + ", request);");
            w.close("}");
        }
        w.close("}");
    }
}
