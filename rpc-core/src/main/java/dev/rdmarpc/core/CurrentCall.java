package dev.rdmarpc.core;

import dev.rdmarpc.core.internal.ChannelImpl;

/**
 * The {@link CallContext} current on each thread: set while a handler's code runs, read as a call starts. A plain
 * thread-local: setting and restoring it allocates nothing once a thread has its entry.
 */
final class CurrentCall {
    private static final ThreadLocal<CallContext> CURRENT = new ThreadLocal<>();

    private CurrentCall() {
    }

    /** The current context, or null for none ({@link CallContext#ROOT}). */
    static CallContext get() {
        return CURRENT.get();
    }

    /** Makes {@code context} current; returns the one it replaces, for {@link #exit}. */
    static CallContext enter(CallContext context) {
        CallContext previous = CURRENT.get();
        CURRENT.set(context == CallContext.ROOT ? null : context);
        return previous;
    }

    /** Restores what {@link #enter} returned. */
    static void exit(CallContext previous) {
        CURRENT.set(previous);
    }

    /** A call on {@code channel}: a {@link ChildCall} of the current context when there is one. */
    static <ReqT, RespT> ClientCall<ReqT, RespT> newCall(ChannelImpl channel, MethodDescriptor<ReqT, RespT> method,
                                                         CallOptions options) {
        CallContext parent = CURRENT.get();
        return parent == null ? channel.newCall(method, options)
                : new ChildCall<>(channel.newCall(method, inherit(options, parent)), parent);
    }

    /**
     * {@code options} for a call made in {@code parent}: with the parent's deadline when the call has none or a later
     * one (a new instance only then).
     */
    private static CallOptions inherit(CallOptions options, CallContext parent) {
        Deadline inherited = parent.getDeadline();
        if (inherited == null) {
            return options;
        }
        Deadline own = options.getDeadline();
        return own != null && own.compareTo(inherited) <= 0 ? options : options.withDeadline(inherited);
    }
}
