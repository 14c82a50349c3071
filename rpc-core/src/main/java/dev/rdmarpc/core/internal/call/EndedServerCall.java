package dev.rdmarpc.core.internal.call;

import dev.rdmarpc.core.Deadline;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.ServerCall;
import dev.rdmarpc.core.Status;

/**
 * An ended server call of one method, the stand-in {@code MethodDescriptor.endedServerCall} gives: what a single-request
 * response observer of {@code ServerCalls} holds once it let core's call go. It is not ready, not cancelled, has no
 * deadline, and sends nothing. For rpc-core alone.
 */
public final class EndedServerCall<ReqT, RespT> extends ServerCall<ReqT, RespT> {
    private final MethodDescriptor<ReqT, RespT> method;

    public EndedServerCall(MethodDescriptor<ReqT, RespT> method) {
        this.method = method;
    }

    @Override
    public void request(int n) {
    }

    @Override
    public void sendHeaders(Metadata headers) {
        throw new IllegalStateException("call already closed");
    }

    @Override
    public void sendMessage(RespT message) {
        throw new IllegalStateException("call already closed");
    }

    @Override
    public void close(Status status, Metadata trailers) {
        throw new IllegalStateException("call already closed");
    }

    @Override
    public boolean isCancelled() {
        return false;
    }

    @Override
    public boolean isReady() {
        return false;
    }

    @Override
    public Deadline getDeadline() {
        return null;
    }

    @Override
    public MethodDescriptor<ReqT, RespT> getMethodDescriptor() {
        return method;
    }

    @Override
    public String getPeer() {
        return null;
    }
}
