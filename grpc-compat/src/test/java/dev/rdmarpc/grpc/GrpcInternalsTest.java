package dev.rdmarpc.grpc;

import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.ClientStreamTracer;
import io.grpc.Metadata;
import io.grpc.ProxyDetector;
import io.grpc.Status;
import io.grpc.internal.GrpcUtil;
import io.grpc.internal.ManagedChannelImplBuilder;
import io.grpc.internal.ServerImplBuilder;
import io.grpc.internal.SharedResourceHolder;
import io.grpc.internal.StatsTraceContext;
import org.junit.jupiter.api.Test;

import java.io.Closeable;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Fails loudly when the grpc-core internals grpc-compat is built on change (see README.md): the
 * pinned grpc version, the exact abstract methods of every internal interface it implements or
 * calls back, and the exact signatures of the internal classes and constants it uses. A failure
 * here means: re-read grpc's change, adapt the bridge, then update this list.
 */
class GrpcInternalsTest {

    @Test
    void grpcVersionIsThePinnedOne() {
        assertEquals("1.85.1", GrpcUtil.IMPLEMENTATION_VERSION,
                "grpc-compat was verified against grpc 1.85.1; re-verify the internals before changing it");
    }

    @Test
    void clientTransportInterfaces() throws Exception {
        abstractMethods("io.grpc.internal.ClientTransportFactory",
                "io.grpc.internal.ClientTransportFactory$SwapChannelCredentialsResult swapChannelCredentials(io.grpc.ChannelCredentials)",
                "io.grpc.internal.ConnectionClientTransport newClientTransport(java.net.SocketAddress, io.grpc.internal.ClientTransportFactory$ClientTransportOptions, io.grpc.ChannelLogger)",
                "java.util.Collection getSupportedSocketAddressTypes()",
                "java.util.concurrent.ScheduledExecutorService getScheduledExecutorService()",
                "void close()");
        abstractMethods("io.grpc.internal.ConnectionClientTransport",
                "io.grpc.Attributes getAttributes()");
        abstractMethods("io.grpc.internal.ManagedClientTransport",
                "java.lang.Runnable start(io.grpc.internal.ManagedClientTransport$Listener)",
                "void shutdown(io.grpc.Status)",
                "void shutdownNow(io.grpc.Status)");
        abstractMethods("io.grpc.internal.ManagedClientTransport$Listener",
                "void transportInUse(boolean)",
                "void transportReady()",
                "void transportShutdown(io.grpc.Status, io.grpc.internal.DisconnectError)",
                "void transportTerminated()");
        method("io.grpc.internal.ManagedClientTransport$Listener", "filterTransport", Attributes.class, Attributes.class);
        abstractMethods("io.grpc.internal.ClientTransport",
                "io.grpc.internal.ClientStream newStream(io.grpc.MethodDescriptor, io.grpc.Metadata, io.grpc.CallOptions, io.grpc.ClientStreamTracer[])",
                "void ping(io.grpc.internal.ClientTransport$PingCallback, java.util.concurrent.Executor)");
        abstractMethods("io.grpc.internal.ClientTransport$PingCallback",
                "void onFailure(io.grpc.Status)",
                "void onSuccess(long)");
        abstractMethods("io.grpc.InternalInstrumented",
                "com.google.common.util.concurrent.ListenableFuture getStats()");
        abstractMethods("io.grpc.InternalWithLogId",
                "io.grpc.InternalLogId getLogId()");
        abstractMethods("io.grpc.internal.ClientStream",
                "io.grpc.Attributes getAttributes()",
                "void appendTimeoutInsight(io.grpc.internal.InsightBuilder)",
                "void cancel(io.grpc.Status)",
                "void halfClose()",
                "void setAuthority(java.lang.String)",
                "void setDeadline(io.grpc.Deadline)",
                "void setDecompressorRegistry(io.grpc.DecompressorRegistry)",
                "void setFullStreamDecompression(boolean)",
                "void setMaxInboundMessageSize(int)",
                "void setMaxOutboundMessageSize(int)",
                "void start(io.grpc.internal.ClientStreamListener)");
        abstractMethods("io.grpc.internal.Stream",
                "boolean isReady()",
                "void flush()",
                "void optimizeForDirectExecutor()",
                "void request(int)",
                "void setCompressor(io.grpc.Compressor)",
                "void setMessageCompression(boolean)",
                "void writeMessage(java.io.InputStream)");
        abstractMethods("io.grpc.internal.ClientStreamListener",
                "void closed(io.grpc.Status, io.grpc.internal.ClientStreamListener$RpcProgress, io.grpc.Metadata)",
                "void headersRead(io.grpc.Metadata)");
        abstractMethods("io.grpc.internal.StreamListener",
                "void messagesAvailable(io.grpc.internal.StreamListener$MessageProducer)",
                "void onReady()");
        abstractMethods("io.grpc.internal.StreamListener$MessageProducer",
                "java.io.InputStream next()");
        enumConstants("io.grpc.internal.ClientStreamListener$RpcProgress", "PROCESSED", "REFUSED");
        enumConstants("io.grpc.internal.SimpleDisconnectError", "UNKNOWN", "CONNECTION_RESET", "SUBCHANNEL_SHUTDOWN");
        abstractMethods("io.grpc.internal.KeepAliveManager$ClientKeepAlivePinger$TransportWithDisconnectReason",
                "void shutdownNow(io.grpc.Status, io.grpc.internal.DisconnectError)");
        abstractMethods("io.grpc.internal.DisconnectError", "java.lang.String toErrorString()");
    }

    @Test
    void serverTransportInterfaces() throws Exception {
        abstractMethods("io.grpc.internal.InternalServer",
                "io.grpc.InternalInstrumented getListenSocketStats()",
                "java.net.SocketAddress getListenSocketAddress()",
                "java.util.List getListenSocketAddresses()",
                "java.util.List getListenSocketStatsList()",
                "void shutdown()",
                "void start(io.grpc.internal.ServerListener)");
        abstractMethods("io.grpc.internal.ServerListener",
                "io.grpc.internal.ServerTransportListener transportCreated(io.grpc.internal.ServerTransport)",
                "void serverShutdown()");
        abstractMethods("io.grpc.internal.SharedResourceHolder$Resource",
                "java.lang.Object create()",
                "void close(java.lang.Object)");
        abstractMethods("io.grpc.internal.ServerTransportListener",
                "io.grpc.Attributes transportReady(io.grpc.Attributes)",
                "void streamCreated(io.grpc.internal.ServerStream, java.lang.String, io.grpc.Metadata)",
                "void transportTerminated()");
        abstractMethods("io.grpc.internal.ServerTransport",
                "java.util.concurrent.ScheduledExecutorService getScheduledExecutorService()",
                "void shutdown()",
                "void shutdownNow(io.grpc.Status)");
        abstractMethods("io.grpc.internal.ServerStream",
                "int streamId()",
                "io.grpc.Attributes getAttributes()",
                "io.grpc.internal.StatsTraceContext statsTraceContext()",
                "java.lang.String getAuthority()",
                "void cancel(io.grpc.Status)",
                "void close(io.grpc.Status, io.grpc.Metadata)",
                "void setDecompressor(io.grpc.Decompressor)",
                "void setListener(io.grpc.internal.ServerStreamListener)",
                "void setOnReadyThreshold(int)",
                "void triggerEvent(java.lang.Object)",
                "void writeHeaders(io.grpc.Metadata, boolean)");
        abstractMethods("io.grpc.internal.ServerStreamListener",
                "void closed(io.grpc.Status)",
                "void halfClosed()",
                "void triggerEvent(java.lang.Object)");
    }

    @Test
    void builders() throws Exception {
        method("io.grpc.netty.InternalNettyChannelBuilder", "buildTransportFactory",
                io.grpc.internal.ClientTransportFactory.class, io.grpc.netty.NettyChannelBuilder.class);
        abstractMethods("io.grpc.internal.ManagedChannelImplBuilder$ClientTransportFactoryBuilder",
                "io.grpc.internal.ClientTransportFactory buildClientTransportFactory()");
        abstractMethods("io.grpc.internal.ManagedChannelImplBuilder$ChannelBuilderDefaultPortProvider",
                "int getDefaultPort()");
        abstractMethods("io.grpc.internal.ServerImplBuilder$ClientTransportServersBuilder",
                "io.grpc.internal.InternalServer buildClientTransportServers(java.util.List, io.grpc.MetricRecorder)");
        constructor(ManagedChannelImplBuilder.class, String.class,
                ManagedChannelImplBuilder.ClientTransportFactoryBuilder.class,
                ManagedChannelImplBuilder.ChannelBuilderDefaultPortProvider.class);
        constructor(ManagedChannelImplBuilder.class, SocketAddress.class, String.class,
                ManagedChannelImplBuilder.ClientTransportFactoryBuilder.class,
                ManagedChannelImplBuilder.ChannelBuilderDefaultPortProvider.class);
        constructor(ManagedChannelImplBuilder.class, String.class, io.grpc.ChannelCredentials.class,
                io.grpc.CallCredentials.class, ManagedChannelImplBuilder.ClientTransportFactoryBuilder.class,
                ManagedChannelImplBuilder.ChannelBuilderDefaultPortProvider.class);
        constructor(ManagedChannelImplBuilder.class, SocketAddress.class, String.class, io.grpc.ChannelCredentials.class,
                io.grpc.CallCredentials.class, ManagedChannelImplBuilder.ClientTransportFactoryBuilder.class,
                ManagedChannelImplBuilder.ChannelBuilderDefaultPortProvider.class);
        method(ManagedChannelImplBuilder.class, "proxyDetector", ManagedChannelImplBuilder.class, ProxyDetector.class);
        method(ManagedChannelImplBuilder.class, "setStatsEnabled", void.class, boolean.class);
        method(ManagedChannelImplBuilder.class, "setTracingEnabled", void.class, boolean.class);
        constructor(ServerImplBuilder.class, ServerImplBuilder.ClientTransportServersBuilder.class);
        method(ServerImplBuilder.class, "setStatsEnabled", void.class, boolean.class);
        method(ServerImplBuilder.class, "setTracingEnabled", void.class, boolean.class);
        method(ServerImplBuilder.class, "handshakeTimeout", ServerImplBuilder.class, long.class, TimeUnit.class);
        method("io.grpc.internal.ClientTransportFactory$ClientTransportOptions", "getAuthority", String.class);
        method("io.grpc.internal.ClientTransportFactory$ClientTransportOptions", "getUserAgent", String.class);
        method("io.grpc.internal.ClientTransportFactory$ClientTransportOptions", "getEagAttributes", Attributes.class);
    }

    @Test
    void keepAlive() throws Exception {
        Class<?> manager = Class.forName("io.grpc.internal.KeepAliveManager");
        Class<?> pinger = Class.forName("io.grpc.internal.KeepAliveManager$KeepAlivePinger");
        Class<?> clientPinger = Class.forName("io.grpc.internal.KeepAliveManager$ClientKeepAlivePinger");
        constructor(manager, pinger, java.util.concurrent.ScheduledExecutorService.class, long.class, long.class, boolean.class);
        for (String name : List.of("onTransportStarted", "onDataReceived", "onTransportActive", "onTransportIdle", "onTransportTermination")) {
            method(manager, name, void.class);
        }
        staticMethod(manager, "clampKeepAliveTimeInNanos", long.class, long.class);
        staticMethod(manager, "clampKeepAliveTimeoutInNanos", long.class, long.class);
        assertTrue(pinger.isAssignableFrom(clientPinger));
        constructor(clientPinger, Class.forName("io.grpc.internal.KeepAliveManager$ClientKeepAlivePinger$TransportWithDisconnectReason"));
        // the server transport implements the pinger itself
        abstractMethods("io.grpc.internal.KeepAliveManager$KeepAlivePinger", "void onPingTimeout()", "void ping()");
        for (String name : List.of("DEFAULT_SERVER_KEEPALIVE_TIME_NANOS", "DEFAULT_SERVER_KEEPALIVE_TIMEOUT_NANOS",
                "SERVER_KEEPALIVE_TIME_NANOS_DISABLED")) {
            staticField(GrpcUtil.class, name, long.class);
        }
    }

    @Test
    void maxConnectionIdle() throws Exception {
        Class<?> idle = Class.forName("io.grpc.internal.MaxConnectionIdleManager");
        assertTrue(Modifier.isPublic(idle.getModifiers()));
        constructor(idle, long.class);
        method(idle, "start", void.class, Runnable.class, java.util.concurrent.ScheduledExecutorService.class);
        for (String name : List.of("onTransportActive", "onTransportIdle", "onTransportTermination")) {
            method(idle, name, void.class);
        }
    }

    @Test
    void helpers() throws Exception {
        staticMethod(StatsTraceContext.class, "newClientContext", StatsTraceContext.class,
                ClientStreamTracer[].class, Attributes.class, Metadata.class);
        staticMethod(StatsTraceContext.class, "newServerContext", StatsTraceContext.class,
                List.class, String.class, Metadata.class);
        method(StatsTraceContext.class, "clientOutboundHeaders", void.class);
        method(StatsTraceContext.class, "clientInboundHeaders", void.class, Metadata.class);
        method(StatsTraceContext.class, "clientInboundTrailers", void.class, Metadata.class);
        method(StatsTraceContext.class, "streamClosed", void.class, Status.class);
        method(StatsTraceContext.class, "outboundMessage", void.class, int.class);
        method(StatsTraceContext.class, "inboundMessage", void.class, int.class);
        method(StatsTraceContext.class, "outboundMessageSent", void.class, int.class, long.class, long.class);
        method(StatsTraceContext.class, "inboundMessageRead", void.class, int.class, long.class, long.class);
        for (String name : List.of("outboundWireSize", "outboundUncompressedSize", "inboundWireSize", "inboundUncompressedSize")) {
            method(StatsTraceContext.class, name, void.class, long.class);
        }
        staticMethod(io.grpc.InternalMetadata.class, "serialize", byte[][].class, Metadata.class);
        staticMethod(io.grpc.InternalMetadata.class, "newMetadata", Metadata.class, int.class, byte[][].class);
        staticMethod(io.grpc.InternalMetadata.class, "headerCount", int.class, Metadata.class);
        staticMethod(io.grpc.InternalLogId.class, "allocate", io.grpc.InternalLogId.class, Class.class, String.class);
        method("io.grpc.internal.InsightBuilder", "appendKeyValue", Class.forName("io.grpc.internal.InsightBuilder"), String.class, Object.class);
        staticMethod(SharedResourceHolder.class, "get", Object.class, SharedResourceHolder.Resource.class);
        staticMethod(SharedResourceHolder.class, "release", Object.class, SharedResourceHolder.Resource.class, Object.class);
        staticMethod(GrpcUtil.class, "getGrpcUserAgent", String.class, String.class, String.class);
        staticMethod(GrpcUtil.class, "authorityFromHostAndPort", String.class, String.class, int.class);
        staticMethod(GrpcUtil.class, "shouldBeCountedForInUse", boolean.class, CallOptions.class);
        staticMethod(GrpcUtil.class, "closeQuietly", void.class, Closeable.class);
        staticField(GrpcUtil.class, "TIMEOUT_KEY", Metadata.Key.class);
        staticField(GrpcUtil.class, "MESSAGE_ENCODING_KEY", Metadata.Key.class);
        staticField(GrpcUtil.class, "TIMER_SERVICE", SharedResourceHolder.Resource.class);
        staticField(GrpcUtil.class, "NOOP_PROXY_DETECTOR", ProxyDetector.class);
        for (String name : List.of("TIMEOUT", "CONTENT_ENCODING", "CONTENT_ACCEPT_ENCODING")) {
            staticField(GrpcUtil.class, name, String.class);
        }
        for (String name : List.of("DEFAULT_MAX_MESSAGE_SIZE", "DEFAULT_MAX_HEADER_LIST_SIZE", "DEFAULT_PORT_PLAINTEXT")) {
            staticField(GrpcUtil.class, name, int.class);
        }
        for (String name : List.of("KEEPALIVE_TIME_NANOS_DISABLED", "DEFAULT_KEEPALIVE_TIMEOUT_NANOS")) {
            staticField(GrpcUtil.class, name, long.class);
        }
        staticField(io.grpc.internal.GrpcAttributes.class, "ATTR_SECURITY_LEVEL", Attributes.Key.class);
        staticField(io.grpc.internal.GrpcAttributes.class, "ATTR_CLIENT_EAG_ATTRS", Attributes.Key.class);
    }

    // ------------------------------------------------------------------ helpers

    private static void abstractMethods(String className, String... expected) throws ClassNotFoundException {
        Class<?> c = Class.forName(className);
        TreeSet<String> actual = new TreeSet<>();
        for (Method m : c.getDeclaredMethods()) {
            if (Modifier.isAbstract(m.getModifiers())) {
                actual.add(signature(m));
            }
        }
        assertEquals(new TreeSet<>(Arrays.asList(expected)), actual,
                "abstract methods of grpc internal " + className + " changed");
    }

    private static String signature(Method m) {
        List<String> params = new ArrayList<>();
        for (Class<?> p : m.getParameterTypes()) {
            params.add(p.getTypeName());
        }
        return m.getReturnType().getTypeName() + " " + m.getName() + "(" + String.join(", ", params) + ")";
    }

    private static void method(String className, String name, Class<?> returns, Class<?>... params) throws ClassNotFoundException {
        method(Class.forName(className), name, returns, params);
    }

    private static void method(Class<?> c, String name, Class<?> returns, Class<?>... params) {
        try {
            Method m = c.getMethod(name, params);
            assertEquals(returns, m.getReturnType(), "return type of " + c.getName() + "." + name);
            assertTrue(Modifier.isPublic(m.getModifiers()), c.getName() + "." + name + " must be public");
        } catch (NoSuchMethodException e) {
            fail("grpc internal " + c.getName() + "." + name + Arrays.toString(params) + " is gone", e);
        }
    }

    @SuppressWarnings("ReturnValueIgnored") // looked up only to fail when the constructor is gone
    private static void constructor(Class<?> c, Class<?>... params) {
        try {
            c.getConstructor(params);
        } catch (NoSuchMethodException e) {
            fail("grpc internal constructor " + c.getName() + Arrays.toString(params) + " is gone", e);
        }
    }

    private static void staticMethod(Class<?> c, String name, Class<?> returns, Class<?>... params) {
        method(c, name, returns, params);
        try {
            assertTrue(Modifier.isStatic(c.getMethod(name, params).getModifiers()), c.getName() + "." + name + " must be static");
        } catch (NoSuchMethodException e) {
            throw new AssertionError(e);
        }
    }

    private static void staticField(Class<?> c, String name, Class<?> type) {
        try {
            Field f = c.getField(name);
            assertEquals(type, f.getType(), "type of " + c.getName() + "." + name);
            assertTrue(Modifier.isStatic(f.getModifiers()) && Modifier.isFinal(f.getModifiers()),
                    c.getName() + "." + name + " must be static final");
        } catch (NoSuchFieldException e) {
            fail("grpc internal constant " + c.getName() + "." + name + " is gone", e);
        }
    }

    private static void enumConstants(String className, String... names) throws ClassNotFoundException {
        Class<?> c = Class.forName(className);
        List<String> actual = new ArrayList<>();
        for (Object o : c.getEnumConstants()) {
            actual.add(((Enum<?>) o).name());
        }
        assertTrue(actual.containsAll(Arrays.asList(names)), className + " lacks one of " + Arrays.toString(names) + ": " + actual);
    }
}
