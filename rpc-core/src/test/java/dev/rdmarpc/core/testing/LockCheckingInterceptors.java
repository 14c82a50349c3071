package dev.rdmarpc.core.testing;

import dev.rdmarpc.core.Attachment;
import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.Channel;
import dev.rdmarpc.core.ClientCall;
import dev.rdmarpc.core.ClientInterceptor;
import dev.rdmarpc.core.ForwardingClientCall;
import dev.rdmarpc.core.ForwardingClientCallListener;
import dev.rdmarpc.core.ForwardingServerCall;
import dev.rdmarpc.core.ForwardingServerCallListener;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.ServerCall;
import dev.rdmarpc.core.ServerCallHandler;
import dev.rdmarpc.core.ServerInterceptor;
import dev.rdmarpc.core.Status;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.Executor;

/**
 * Interceptors and wrappers that run {@link LockCheck#assertNoLockHeld} in every piece of application code rdmarpc
 * calls: the interceptors themselves, every listener callback, every attachment's release callback, every executor run.
 */
public final class LockCheckingInterceptors {
    private LockCheckingInterceptors() {
    }

    /** Checks the client's interceptor step, its listener's callbacks and the release callbacks of the attachments it sends. */
    public static ClientInterceptor client() {
        return new ClientInterceptor() {
            @Override
            public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
                                                                       CallOptions callOptions, Channel next) {
                return new CheckedClientCall<>(next.newCall(method, callOptions));
            }
        };
    }

    /** Checks the server's interceptor step, its listener's callbacks and the release callbacks of the attachments it sends. */
    public static ServerInterceptor server() {
        return new ServerInterceptor() {
            @Override
            public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
                                                                         ServerCallHandler<ReqT, RespT> next) {
                LockCheck.assertNoLockHeld("a server interceptor");
                return new CheckedServerListener<>(next.startCall(new CheckedServerCall<>(call), headers));
            }
        };
    }

    /**
     * {@code onReleased} (may be null) checked as it runs; it runs whatever the check finds (a failed check is
     * recorded), so that a test waiting for it goes on to report the violation.
     */
    public static Runnable checkedRelease(Runnable onReleased) {
        return () -> {
            try {
                LockCheck.assertNoLockHeld("an attachment's release callback");
            } finally {
                if (onReleased != null) {
                    onReleased.run();
                }
            }
        };
    }

    /** {@code executor}, checked where rdmarpc hands it a run and where the run starts. */
    public static Executor checkedExecutor(Executor executor) {
        return run -> {
            LockCheck.assertNoLockHeld("an executor's execute");
            executor.execute(() -> {
                LockCheck.assertNoLockHeld("an executor's run");
                run.run();
            });
        };
    }

    private static final class CheckedClientCall<ReqT, RespT>
            extends ForwardingClientCall.SimpleForwardingClientCall<ReqT, RespT> {
        CheckedClientCall(ClientCall<ReqT, RespT> delegate) {
            super(delegate);
        }

        @Override
        public void start(Listener<RespT> listener, Metadata headers) {
            LockCheck.assertNoLockHeld("a client interceptor");
            super.start(new CheckedClientListener<>(listener), headers);
        }

        @Override
        public void sendMessage(ReqT message, MemorySegment attachment, Runnable onReleased) {
            super.sendMessage(message, attachment, checkedRelease(onReleased));
        }
    }

    private static final class CheckedClientListener<RespT>
            extends ForwardingClientCallListener.SimpleForwardingClientCallListener<RespT> {
        CheckedClientListener(ClientCall.Listener<RespT> delegate) {
            super(delegate);
        }

        @Override
        public void onHeaders(Metadata headers) {
            LockCheck.assertNoLockHeld("a client listener's onHeaders");
            super.onHeaders(headers);
        }

        @Override
        public void onMessage(RespT message) {
            LockCheck.assertNoLockHeld("a client listener's onMessage");
            super.onMessage(message);
        }

        @Override
        public void onMessage(RespT message, Attachment attachment) {
            LockCheck.assertNoLockHeld("a client listener's onMessage");
            super.onMessage(message, attachment);
        }

        @Override
        public void onClose(Status status, Metadata trailers) {
            LockCheck.assertNoLockHeld("a client listener's onClose");
            super.onClose(status, trailers);
        }

        @Override
        public void onReady() {
            LockCheck.assertNoLockHeld("a client listener's onReady");
            super.onReady();
        }
    }

    private static final class CheckedServerCall<ReqT, RespT>
            extends ForwardingServerCall.SimpleForwardingServerCall<ReqT, RespT> {
        CheckedServerCall(ServerCall<ReqT, RespT> delegate) {
            super(delegate);
        }

        @Override
        public void sendMessage(RespT message, MemorySegment attachment, Runnable onReleased) {
            super.sendMessage(message, attachment, checkedRelease(onReleased));
        }
    }

    private static final class CheckedServerListener<ReqT>
            extends ForwardingServerCallListener.SimpleForwardingServerCallListener<ReqT> {
        CheckedServerListener(ServerCall.Listener<ReqT> delegate) {
            super(delegate);
        }

        @Override
        public void onMessage(ReqT message) {
            LockCheck.assertNoLockHeld("a server listener's onMessage");
            super.onMessage(message);
        }

        @Override
        public void onMessage(ReqT message, Attachment attachment) {
            LockCheck.assertNoLockHeld("a server listener's onMessage");
            super.onMessage(message, attachment);
        }

        @Override
        public void onHalfClose() {
            LockCheck.assertNoLockHeld("a server listener's onHalfClose");
            super.onHalfClose();
        }

        @Override
        public void onCancel() {
            LockCheck.assertNoLockHeld("a server listener's onCancel");
            super.onCancel();
        }

        @Override
        public void onComplete() {
            LockCheck.assertNoLockHeld("a server listener's onComplete");
            super.onComplete();
        }

        @Override
        public void onReady() {
            LockCheck.assertNoLockHeld("a server listener's onReady");
            super.onReady();
        }
    }
}
