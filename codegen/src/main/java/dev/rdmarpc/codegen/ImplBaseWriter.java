package dev.rdmarpc.codegen;

import java.util.List;

/**
 * Writes a service's {@code <Service>ImplBase}: one handler per rpc failing with UNIMPLEMENTED until overridden, the
 * attachment-aware twin of each rpc that asked for one, and {@code bindService()}. Every call of a generated method
 * has a receiver ({@code this.}), so an rpc named like a restricted identifier ({@code yield}) still compiles.
 */
final class ImplBaseWriter {
    private final ServiceClass s;
    private final TypeNames n;

    ImplBaseWriter(ServiceClass service) {
        this.s = service;
        this.n = service.names;
    }

    void write(SourceWriter w) {
        w.blank();
        w.javadoc("Base class of an implementation of {@code " + s.serviceName + "}: override the methods the service"
                + " implements; the others fail with UNIMPLEMENTED.", s.comments.service(s.index));
        s.deprecated(w, s.deprecated);
        w.open("public abstract static class " + s.implBase() + " implements " + n.core("BindableService") + " {");
        String serverCalls = n.core("ServerCalls");
        for (Rpc m : s.rpcs) {
            w.blank();
            w.javadoc("Handles {@code " + m.proto().getName() + "}.", s.comments.method(s.index, m.index()));
            s.deprecated(w, m.deprecated());
            if (m.clientStreaming()) {
                w.open("public " + s.observer(m.request()) + " " + m.javaName() + "(" + s.observer(m.response())
                        + " responseObserver) {");
                w.line("return " + serverCalls + ".asyncUnimplementedStreamingCall(" + s.descriptor(m) + ", responseObserver);");
            } else {
                w.open("public void " + m.javaName() + "(" + m.request() + " request, " + s.observer(m.response())
                        + " responseObserver) {");
                w.line(serverCalls + ".asyncUnimplementedUnaryCall(" + s.descriptor(m) + ", responseObserver);");
            }
            w.close("}");
            if (m.attachments()) {
                withAttachment(w, m);
            }
        }
        bindService(w);
        if (s.hasAttachments()) {
            overrides(w);
        }
        w.close("}");
    }

    /**
     * The attachment-aware handler of one rpc: overriding it makes the service receive and send attachments for that
     * rpc; the default hands the plain handler the message (its attachment released).
     */
    private void withAttachment(SourceWriter w, Rpc m) {
        w.blank();
        w.javadoc("Handles {@code " + m.proto().getName() + "} with the attachments beside its messages; override it"
                + " instead of {@code " + m.javaName() + "} to receive and send them. The default releases each request's"
                + " attachment and calls {@code " + m.javaName() + "}.", List.of());
        s.deprecated(w, m.deprecated());
        String attachmentCalls = n.core("AttachmentCalls");
        if (m.clientStreaming()) {
            w.open("public " + s.observer(s.withAttachment(m.request())) + " " + m.attachmentName() + "("
                    + s.observer(s.withAttachment(m.response())) + " responseObserver) {");
            w.line("return " + attachmentCalls + ".withoutAttachments(this." + m.javaName() + "(" + attachmentCalls
                    + ".plain(responseObserver)));");
        } else {
            w.open("public void " + m.attachmentName() + "(" + s.withAttachment(m.request()) + " request, "
                    + s.observer(s.withAttachment(m.response())) + " responseObserver) {");
            w.line("request.release();");
            w.line("this." + m.javaName() + "(request.message(), " + attachmentCalls + ".plain(responseObserver));");
        }
        w.close("}");
    }

    private void bindService(SourceWriter w) {
        String definition = n.core("ServiceDefinition");
        String serverCalls = n.core("ServerCalls");
        w.blank();
        s.override(w);
        w.open("public final " + definition + " bindService() {");
        String schema = ".setSchemaDescriptor(new " + s.descriptorSupplier() + "())";
        if (s.rpcs.isEmpty()) {
            w.line("return " + definition + ".builder(SERVICE_NAME)" + schema + ".build();");
        } else {
            w.line("return " + definition + ".builder(SERVICE_NAME)");
            w.line("        " + schema);
            for (Rpc m : s.rpcs) {
                String plain = serverCalls + ".<" + m.request() + ", " + m.response() + ">async" + m.kind()
                        + "Call(this::" + m.javaName() + ")";
                if (m.attachments()) {
                    w.line("        .addMethod(" + s.descriptor(m) + ", this.overrides(\"" + m.attachmentName() + "\")");
                    w.line("                ? " + n.core("AttachmentCalls") + ".server(" + serverCalls + ".<"
                            + s.withAttachment(m.request()) + ", " + s.withAttachment(m.response()) + ">async" + m.kind()
                            + "Call(this::" + m.attachmentName() + "))");
                    w.line("                : " + plain + ")");
                } else {
                    w.line("        .addMethod(" + s.descriptor(m) + ", " + plain + ")");
                }
            }
            w.line("        .build();");
        }
        w.close("}");
    }

    private void overrides(SourceWriter w) {
        String cls = n.lang("Class");
        w.blank();
        w.javadoc("Whether the implementation overrides {@code method} (an attachment-aware handler).", List.of());
        w.open("private boolean overrides(" + n.lang("String") + " method) {");
        w.open("for (" + cls + "<?> c = this.getClass(); c != " + s.implBase() + ".class; c = c.getSuperclass()) {");
        w.open("for (" + n.of("java.lang.reflect", "Method") + " declared : c.getDeclaredMethods()) {");
        w.open("if (declared.getName().equals(method)) {");
        w.line("return true;");
        w.close("}");
        w.close("}");
        w.close("}");
        w.line("return false;");
        w.close("}");
    }
}
