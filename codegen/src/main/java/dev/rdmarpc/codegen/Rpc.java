package dev.rdmarpc.codegen;

import com.google.protobuf.DescriptorProtos.MethodDescriptorProto;

/**
 * One rpc of a service, with the names its generated code uses: its Java method name, its descriptor getter, its
 * request and response classes as the file writes them, whether it is deprecated, and whether it gets
 * {@code ...WithAttachment} methods.
 */
record Rpc(MethodDescriptorProto proto, int index, String javaName, String getter, String request, String response,
           boolean deprecated, boolean attachments) {

    /** Suffix of the generated methods whose messages carry attachments. */
    static final String ATTACHMENT_SUFFIX = "WithAttachment";

    boolean clientStreaming() {
        return proto.getClientStreaming();
    }

    boolean serverStreaming() {
        return proto.getServerStreaming();
    }

    /** The call kind as {@code ClientCalls}' and {@code ServerCalls}' method names spell it ({@code BidiStreaming}). */
    String kind() {
        if (clientStreaming()) {
            return serverStreaming() ? "BidiStreaming" : "ClientStreaming";
        }
        return serverStreaming() ? "ServerStreaming" : "Unary";
    }

    /** The {@code MethodDescriptor.MethodType} constant. */
    String methodType() {
        if (clientStreaming()) {
            return serverStreaming() ? "BIDI_STREAMING" : "CLIENT_STREAMING";
        }
        return serverStreaming() ? "SERVER_STREAMING" : "UNARY";
    }

    /** The call kind in prose ({@code bidi-streaming}). */
    String kindText() {
        return methodType().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
    }

    /** The name of the rpc's attachment-aware method: its Java name (without a keyword's escape) and the suffix. */
    String attachmentName() {
        return attachmentName(javaName);
    }

    /** The attachment-aware method name for a Java method name. */
    static String attachmentName(String javaName) {
        String base = javaName.endsWith("_") ? javaName.substring(0, javaName.length() - 1) : javaName;
        return base + ATTACHMENT_SUFFIX;
    }
}
