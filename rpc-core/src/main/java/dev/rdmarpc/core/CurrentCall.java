package dev.rdmarpc.core;

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

    /**
     * {@code options} for a call made in {@code parent}: with the parent's deadline when the call has none or a later
     * one (a new instance only then).
     */
    static CallOptions inherit(CallOptions options, CallContext parent) {
        Deadline inherited = parent.getDeadline();
        if (inherited == null) {
            return options;
        }
        Deadline own = options.getDeadline();
        return own != null && own.compareTo(inherited) <= 0 ? options : options.withDeadline(inherited);
    }
}
