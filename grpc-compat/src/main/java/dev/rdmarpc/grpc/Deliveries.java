package dev.rdmarpc.grpc;

import dev.rdmarpc.core.internal.RpcExecutors;

import java.util.concurrent.Executor;

/**
 * Where rdmarpc delivers the call callbacks that grpc-compat turns into grpc stream-listener calls.
 *
 * <p>grpc expects a transport to call its stream listeners with no transport lock held (its
 * listeners may run application code inline, e.g. with {@code directExecutor()}). rdmarpc core runs
 * a call's callbacks under that call's lock when its executor runs them inline, so grpc-compat
 * hands them to a pool thread instead. Once core runs inline callbacks outside the lock, setting
 * {@code -Ddev.rdmarpc.grpc.inlineCallbacks=true} removes that hop (it is off by default because
 * it is only safe after that core change).
 */
final class Deliveries {
    static final boolean INLINE = Boolean.getBoolean("dev.rdmarpc.grpc.inlineCallbacks");

    static final Executor EXECUTOR = INLINE ? RpcExecutors.direct() : RpcExecutors.defaultCallbackExecutor();

    private Deliveries() {
    }
}
