package dev.rdmarpc.grpc;

import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;

import java.util.function.Consumer;

/**
 * A client interceptor that hands each call's attributes (its transport, TLS session, ...) to a consumer once the
 * response headers arrive, when the call knows them.
 */
final class CallAttributesRecorder implements ClientInterceptor {
    private final Consumer<Attributes> consumer;

    CallAttributesRecorder(Consumer<Attributes> consumer) {
        this.consumer = consumer;
    }

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
            @Override
            public void start(Listener<R> listener, Metadata headers) {
                ClientCall<Q, R> call = this;
                super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                    @Override
                    public void onHeaders(Metadata h) {
                        consumer.accept(call.getAttributes());
                        super.onHeaders(h);
                    }
                }, headers);
            }
        };
    }
}
