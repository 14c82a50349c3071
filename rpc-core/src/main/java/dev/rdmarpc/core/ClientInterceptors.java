package dev.rdmarpc.core;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/** Puts {@link ClientInterceptor}s in front of a {@link Channel}, in grpc-java's order. */
public final class ClientInterceptors {
    private ClientInterceptors() {
    }

    /**
     * A channel whose calls pass through the interceptors; the <em>last</em> one given runs first (as if each
     * call of this method wrapped the channel once more), the first one given runs next to the real channel.
     */
    public static Channel intercept(Channel channel, ClientInterceptor... interceptors) {
        return intercept(channel, Arrays.asList(interceptors));
    }

    /** As {@link #intercept(Channel, ClientInterceptor...)}: the last interceptor in the list runs first. */
    public static Channel intercept(Channel channel, List<? extends ClientInterceptor> interceptors) {
        Objects.requireNonNull(channel, "channel");
        Channel c = channel;
        for (ClientInterceptor i : interceptors) {
            c = new InterceptedChannel(c, i);
        }
        return c;
    }

    /** As {@link #intercept(Channel, ClientInterceptor...)} but in reading order: the first interceptor given runs first. */
    public static Channel interceptForward(Channel channel, ClientInterceptor... interceptors) {
        return interceptForward(channel, Arrays.asList(interceptors));
    }

    /** As {@link #interceptForward(Channel, ClientInterceptor...)}: the first interceptor in the list runs first. */
    public static Channel interceptForward(Channel channel, List<? extends ClientInterceptor> interceptors) {
        List<? extends ClientInterceptor> reversed = interceptors.reversed();
        return intercept(channel, reversed);
    }

    /** A channel that hands each new call to one interceptor, with the wrapped channel as its {@code next}. */
    private static final class InterceptedChannel implements Channel {
        private final Channel next;
        private final ClientInterceptor interceptor;

        InterceptedChannel(Channel next, ClientInterceptor interceptor) {
            this.next = next;
            this.interceptor = Objects.requireNonNull(interceptor, "interceptor");
        }

        @Override
        public <ReqT, RespT> ClientCall<ReqT, RespT> newCall(MethodDescriptor<ReqT, RespT> method, CallOptions options) {
            return interceptor.interceptCall(method, options, next);
        }

        @Override
        public String authority() {
            return next.authority();
        }

        @Override
        public String toString() {
            return "InterceptedChannel{" + interceptor + " -> " + next + "}";
        }
    }
}
