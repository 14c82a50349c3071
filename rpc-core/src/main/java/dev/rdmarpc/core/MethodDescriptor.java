package dev.rdmarpc.core;

import java.util.Objects;

/** Describes one RPC method: its full name, its kind and how its messages are marshalled. */
public final class MethodDescriptor<ReqT, RespT> {

    /** The four kinds of call. */
    public enum MethodType {
        UNARY(false, false), CLIENT_STREAMING(true, false), SERVER_STREAMING(false, true), BIDI_STREAMING(true, true);

        private final boolean clientSendsMany;
        private final boolean serverSendsMany;

        MethodType(boolean clientSendsMany, boolean serverSendsMany) {
            this.clientSendsMany = clientSendsMany;
            this.serverSendsMany = serverSendsMany;
        }

        public boolean clientSendsOneMessage() {
            return !clientSendsMany;
        }

        public boolean serverSendsOneMessage() {
            return !serverSendsMany;
        }
    }

    private final String fullMethodName;
    private final String serviceName;
    private final String bareMethodName;
    private final MethodType type;
    private final Marshaller<ReqT> requestMarshaller;
    private final Marshaller<RespT> responseMarshaller;
    /** {@link ServerCalls}' stand-in for an ended server call of this method, made once on first use. */
    private volatile ServerCall<ReqT, RespT> endedServerCall;

    private MethodDescriptor(String fullMethodName, MethodType type,
                             Marshaller<ReqT> requestMarshaller, Marshaller<RespT> responseMarshaller) {
        this.fullMethodName = fullMethodName;
        int slash = fullMethodName.lastIndexOf('/');
        if (slash <= 0 || slash == fullMethodName.length() - 1) {
            throw new IllegalArgumentException("full method name must be 'service/method': " + fullMethodName);
        }
        this.serviceName = fullMethodName.substring(0, slash);
        this.bareMethodName = fullMethodName.substring(slash + 1);
        this.type = Objects.requireNonNull(type, "type");
        this.requestMarshaller = Objects.requireNonNull(requestMarshaller, "requestMarshaller");
        this.responseMarshaller = Objects.requireNonNull(responseMarshaller, "responseMarshaller");
    }

    /** Joins a service name and a method name into a full method name. */
    public static String generateFullMethodName(String serviceName, String methodName) {
        return serviceName + "/" + methodName;
    }

    public static <ReqT, RespT> Builder<ReqT, RespT> newBuilder() {
        return new Builder<>();
    }

    public static <ReqT, RespT> MethodDescriptor<ReqT, RespT> create(
            String fullMethodName, MethodType type, Marshaller<ReqT> req, Marshaller<RespT> resp) {
        return new MethodDescriptor<>(fullMethodName, type, req, resp);
    }

    /** "package.Service/Method". */
    public String getFullMethodName() {
        return fullMethodName;
    }

    /** "package.Service". */
    public String getServiceName() {
        return serviceName;
    }

    /** "Method". */
    public String getBareMethodName() {
        return bareMethodName;
    }

    public MethodType getType() {
        return type;
    }

    public Marshaller<ReqT> getRequestMarshaller() {
        return requestMarshaller;
    }

    public Marshaller<RespT> getResponseMarshaller() {
        return responseMarshaller;
    }

    @Override
    public String toString() {
        return "MethodDescriptor{" + fullMethodName + ", " + type + "}";
    }

    /** Builds a {@link MethodDescriptor}. */
    public static final class Builder<ReqT, RespT> {
        private String fullMethodName;
        private MethodType type;
        private Marshaller<ReqT> requestMarshaller;
        private Marshaller<RespT> responseMarshaller;

        private Builder() {
        }

        public Builder<ReqT, RespT> setFullMethodName(String name) {
            this.fullMethodName = name;
            return this;
        }

        public Builder<ReqT, RespT> setType(MethodType t) {
            this.type = t;
            return this;
        }

        public Builder<ReqT, RespT> setRequestMarshaller(Marshaller<ReqT> m) {
            this.requestMarshaller = m;
            return this;
        }

        public Builder<ReqT, RespT> setResponseMarshaller(Marshaller<RespT> m) {
            this.responseMarshaller = m;
            return this;
        }

        public MethodDescriptor<ReqT, RespT> build() {
            return new MethodDescriptor<>(fullMethodName, type, requestMarshaller, responseMarshaller);
        }
    }

    /** The shared stand-in {@link ServerCalls} puts in place of an ended call of this method (made once, on first use). */
    ServerCall<ReqT, RespT> endedServerCall() {
        ServerCall<ReqT, RespT> c = endedServerCall;
        if (c == null) {
            c = ServerCalls.endedCall(this);
            endedServerCall = c; // made twice at worst, by racing threads: each is the same immutable stand-in
        }
        return c;
    }
}
