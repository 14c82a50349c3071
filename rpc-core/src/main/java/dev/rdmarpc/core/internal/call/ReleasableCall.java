package dev.rdmarpc.core.internal.call;

/**
 * Core's server call as the response observer of a {@link ReleasingHandler} sees it: the observer tells it when it has
 * let the call go for good (it ended the call and will not reach it again), after which core may reuse the call's
 * objects. For rpc-core alone.
 */
public interface ReleasableCall {
    /** The observer ended the call and keeps no reference to it. */
    void released();
}
