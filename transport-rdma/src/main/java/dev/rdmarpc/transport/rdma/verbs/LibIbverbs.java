package dev.rdmarpc.transport.rdma.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The FFM binding to {@code libibverbs.so.1}: one downcall handle per exported verb, one per
 * {@code struct ibv_context_ops} function pointer (for the header's {@code static inline} verbs), and thin
 * typed wrappers that turn failures into {@link VerbsException}s.
 * <p>Loading never throws: if the library (or a required symbol) is missing, {@link #unavailableReason()} says
 * why and every wrapper throws a {@link VerbsException} naming the reason.
 * <p>Symbols are resolved with {@code dlsym}, so versioned symbols bind to their default version
 * (e.g. {@code ibv_query_port@@IBVERBS_1.1}).
 */
final class LibIbverbs {
    static final String LIBRARY = "libibverbs.so.1";
    static final String INSTALL_HINT = "apt-get install libibverbs1 ibverbs-providers";

    private static final Linker LINKER = Linker.nativeLinker();
    private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");
    private static final StructLayout CAPTURE_LAYOUT = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CAPTURE_LAYOUT.varHandle(PathElement.groupElement("errno"));
    private static final ThreadLocal<MemorySegment> CALL_STATE =
            ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(CAPTURE_LAYOUT));

    private static final List<String> MISSING = new ArrayList<>();
    private static final String LOAD_FAILURE;
    private static final SymbolLookup LOOKUP;

    static {
        Loaded loaded = tryLoad(LIBRARY);
        LOOKUP = loaded.lookup();
        LOAD_FAILURE = loaded.failure();
    }

    /** A loaded library, or why it could not be loaded. */
    record Loaded(SymbolLookup lookup, String failure) {
    }

    /** Loads {@code library} for the life of the JVM; never throws. */
    static Loaded tryLoad(String library) {
        try {
            return new Loaded(SymbolLookup.libraryLookup(library, Arena.global()), null);
        } catch (IllegalArgumentException e) {
            return new Loaded(null, library + " not found: " + INSTALL_HINT);
        } catch (IllegalCallerException e) {
            return new Loaded(null, "native access to " + library
                    + " is denied: run with --enable-native-access=ALL-UNNAMED");
        } catch (RuntimeException | LinkageError e) {
            return new Loaded(null, "cannot load " + library + ": " + e);
        }
    }

    // ---- exported verbs (control path; errno captured where the call can fail) ----
    private static final MethodHandle GET_DEVICE_LIST = fn("ibv_get_device_list", FunctionDescriptor.of(ADDRESS, ADDRESS), true);
    private static final MethodHandle FREE_DEVICE_LIST = fn("ibv_free_device_list", FunctionDescriptor.ofVoid(ADDRESS), false);
    private static final MethodHandle GET_DEVICE_NAME = fn("ibv_get_device_name", FunctionDescriptor.of(ADDRESS, ADDRESS), false);
    private static final MethodHandle GET_DEVICE_GUID = fn("ibv_get_device_guid", FunctionDescriptor.of(JAVA_LONG, ADDRESS), false);
    private static final MethodHandle OPEN_DEVICE = fn("ibv_open_device", FunctionDescriptor.of(ADDRESS, ADDRESS), true);
    private static final MethodHandle CLOSE_DEVICE = fn("ibv_close_device", FunctionDescriptor.of(JAVA_INT, ADDRESS), true);
    private static final MethodHandle QUERY_DEVICE = fn("ibv_query_device", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), true);
    private static final MethodHandle QUERY_PORT = fn("ibv_query_port", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, ADDRESS), true);
    private static final MethodHandle QUERY_GID = fn("ibv_query_gid", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, JAVA_INT, ADDRESS), true);
    private static final MethodHandle ALLOC_PD = fn("ibv_alloc_pd", FunctionDescriptor.of(ADDRESS, ADDRESS), true);
    private static final MethodHandle DEALLOC_PD = fn("ibv_dealloc_pd", FunctionDescriptor.of(JAVA_INT, ADDRESS), true);
    private static final MethodHandle REG_MR_IOVA2 = fn("ibv_reg_mr_iova2", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_INT), true);
    private static final MethodHandle REG_MR = fn("ibv_reg_mr", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT), true);
    private static final MethodHandle DEREG_MR = fn("ibv_dereg_mr", FunctionDescriptor.of(JAVA_INT, ADDRESS), true);
    private static final MethodHandle CREATE_COMP_CHANNEL = fn("ibv_create_comp_channel", FunctionDescriptor.of(ADDRESS, ADDRESS), true);
    private static final MethodHandle DESTROY_COMP_CHANNEL = fn("ibv_destroy_comp_channel", FunctionDescriptor.of(JAVA_INT, ADDRESS), true);
    private static final MethodHandle CREATE_CQ = fn("ibv_create_cq", FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT), true);
    private static final MethodHandle DESTROY_CQ = fn("ibv_destroy_cq", FunctionDescriptor.of(JAVA_INT, ADDRESS), true);
    private static final MethodHandle GET_CQ_EVENT = fn("ibv_get_cq_event", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS), true);
    private static final MethodHandle ACK_CQ_EVENTS = fn("ibv_ack_cq_events", FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT), false);
    private static final MethodHandle CREATE_SRQ = fn("ibv_create_srq", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS), true);
    private static final MethodHandle MODIFY_SRQ = fn("ibv_modify_srq", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT), true);
    private static final MethodHandle QUERY_SRQ = fn("ibv_query_srq", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), true);
    private static final MethodHandle DESTROY_SRQ = fn("ibv_destroy_srq", FunctionDescriptor.of(JAVA_INT, ADDRESS), true);
    private static final MethodHandle CREATE_QP = fn("ibv_create_qp", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS), true);
    private static final MethodHandle MODIFY_QP = fn("ibv_modify_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT), true);
    private static final MethodHandle QUERY_QP = fn("ibv_query_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, ADDRESS), true);
    private static final MethodHandle DESTROY_QP = fn("ibv_destroy_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS), true);
    private static final MethodHandle GET_ASYNC_EVENT = fn("ibv_get_async_event", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), true);
    private static final MethodHandle ACK_ASYNC_EVENT = fn("ibv_ack_async_event", FunctionDescriptor.ofVoid(ADDRESS), false);

    // ---- struct ibv_context_ops function pointers (the header's static inline verbs); first argument = the pointer ----
    private static final MethodHandle OPS_POLL_CQ = ops(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS), Linker.Option.critical(false));
    private static final MethodHandle OPS_REQ_NOTIFY_CQ = ops(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle OPS_POST_SEND = ops(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
    private static final MethodHandle OPS_POST_RECV = ops(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS), Linker.Option.critical(false));
    private static final MethodHandle OPS_POST_SRQ_RECV = ops(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS), Linker.Option.critical(false));
    private static final MethodHandle OPS_ALLOC_MW = ops(FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT), CAPTURE_ERRNO);
    private static final MethodHandle OPS_DEALLOC_MW = ops(FunctionDescriptor.of(JAVA_INT, ADDRESS), CAPTURE_ERRNO);
    // ---- struct verbs_context's extended ops, before the ibv_context (verbs_get_ctx_op in the header) ----
    private static final MethodHandle VERBS_QUERY_DEVICE_EX = ops(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG));
    private static final MethodHandle OPS_BIND_MW = ops(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS), CAPTURE_ERRNO);

    private static final String UNAVAILABLE = computeUnavailable();

    private LibIbverbs() {
    }

    private static MethodHandle fn(String name, FunctionDescriptor descriptor, boolean captureErrno) {
        if (LOOKUP == null) {
            return null;
        }
        try {
            Optional<MemorySegment> symbol = LOOKUP.find(name);
            if (symbol.isEmpty()) {
                MISSING.add(name);
                return null;
            }
            return captureErrno
                    ? LINKER.downcallHandle(symbol.get(), descriptor, CAPTURE_ERRNO)
                    : LINKER.downcallHandle(symbol.get(), descriptor);
        } catch (RuntimeException e) {
            MISSING.add(name + " (" + e + ")");
            return null;
        }
    }

    private static MethodHandle ops(FunctionDescriptor descriptor, Linker.Option... options) {
        try {
            return LINKER.downcallHandle(descriptor, options);
        } catch (RuntimeException e) {
            MISSING.add("ops downcall " + descriptor + " (" + e + ")");
            return null;
        }
    }

    private static String computeUnavailable() {
        if (LOAD_FAILURE != null) {
            return LOAD_FAILURE;
        }
        List<String> required = new ArrayList<>(MISSING);
        if (REG_MR_IOVA2 != null || REG_MR != null) {
            required.removeIf(s -> s.startsWith("ibv_reg_mr"));
        }
        return required.isEmpty() ? null
                : LIBRARY + " lacks " + String.join(", ", required) + " (rdma-core too old?): " + INSTALL_HINT;
    }

    /** Why the binding cannot be used, or {@code null} if it can. */
    static String unavailableReason() {
        return UNAVAILABLE;
    }

    static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }

    private static MemorySegment callState() {
        return CALL_STATE.get();
    }

    private static int errno(MemorySegment callState) {
        return (int) ERRNO.get(callState, 0L);
    }

    private static void checkAvailable(String call) {
        if (UNAVAILABLE != null) {
            throw new VerbsException(call, 0, UNAVAILABLE);
        }
    }

    private static MemorySegment pointerResult(String call, MemorySegment result, MemorySegment callState) {
        if (result.address() == 0) {
            int errno = errno(callState);
            throw new VerbsException(call, errno, hint(call, errno));
        }
        return result;
    }

    private static void intResult(String call, int rc, MemorySegment callState) {
        if (rc != 0) {
            int errno = VerbsException.errnoOf(rc, errno(callState));
            throw new VerbsException(call, errno, hint(call, errno));
        }
    }

    private static String hint(String call, int errno) {
        if (call.startsWith("ibv_reg_mr") && (errno == Errno.ENOMEM || errno == Errno.EPERM || errno == Errno.EAGAIN)) {
            return "locked-memory limit (RLIMIT_MEMLOCK) too low? raise it (ulimit -l unlimited, "
                    + "or LimitMEMLOCK=infinity for a service)";
        }
        return null;
    }

    // ------------------------------------------------------------------------------------------------------------
    // device list

    /** The result of {@code ibv_get_device_list}: the list pointer (NULL on failure) and errno. */
    record DeviceListResult(MemorySegment list, int count, int errno) {
    }

    static DeviceListResult getDeviceList() {
        checkAvailable("ibv_get_device_list");
        MemorySegment cs = callState();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment num = arena.allocate(JAVA_INT);
            MemorySegment list = (MemorySegment) GET_DEVICE_LIST.invokeExact(cs, num);
            if (list.address() == 0) {
                return new DeviceListResult(MemorySegment.NULL, 0, errno(cs));
            }
            int count = num.get(JAVA_INT, 0);
            return new DeviceListResult(list.reinterpret((count + 1L) * ADDRESS.byteSize()), count, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static void freeDeviceList(MemorySegment list) {
        try {
            FREE_DEVICE_LIST.invokeExact(list);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static String deviceName(MemorySegment device) {
        try {
            MemorySegment name = (MemorySegment) GET_DEVICE_NAME.invokeExact(device);
            return name.address() == 0 ? null : name.reinterpret(256).getString(0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Node GUID in host order (the verb returns it big-endian). */
    static long deviceGuid(MemorySegment device) {
        try {
            long be = (long) GET_DEVICE_GUID.invokeExact(device);
            return java.nio.ByteOrder.nativeOrder() == java.nio.ByteOrder.BIG_ENDIAN ? be : Long.reverseBytes(be);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    // ------------------------------------------------------------------------------------------------------------
    // context

    static MemorySegment openDevice(MemorySegment device) {
        checkAvailable("ibv_open_device");
        MemorySegment cs = callState();
        MemorySegment ctx;
        try {
            ctx = (MemorySegment) OPEN_DEVICE.invokeExact(cs, device);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        return pointerResult("ibv_open_device", ctx, cs).reinterpret(IbvContextStruct.SIZE);
    }

    static void closeDevice(MemorySegment ctx) {
        MemorySegment cs = callState();
        int rc;
        try {
            rc = (int) CLOSE_DEVICE.invokeExact(cs, ctx);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        intResult("ibv_close_device", rc, cs);
    }

    static void queryDevice(MemorySegment ctx, MemorySegment attr) {
        MemorySegment cs = callState();
        int rc;
        try {
            rc = (int) QUERY_DEVICE.invokeExact(cs, ctx, attr);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        intResult("ibv_query_device", rc, cs);
    }

    /**
     * The exported {@code ibv_query_port} (the header wraps it in a static inline that prefers
     * {@code verbs_context.query_port}); the provider fills a whole {@code struct ibv_port_attr}, so
     * {@code attr} must be that big and zeroed.
     */
    static void queryPort(MemorySegment ctx, int port, MemorySegment attr) {
        MemorySegment cs = callState();
        int rc;
        try {
            rc = (int) QUERY_PORT.invokeExact(cs, ctx, (byte) port, attr);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        intResult("ibv_query_port(port " + port + ")", rc, cs);
    }

    static void queryGid(MemorySegment ctx, int port, int index, MemorySegment gid) {
        MemorySegment cs = callState();
        int rc;
        try {
            rc = (int) QUERY_GID.invokeExact(cs, ctx, (byte) port, index, gid);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        intResult("ibv_query_gid(port " + port + ", index " + index + ")", rc, cs);
    }

    // ------------------------------------------------------------------------------------------------------------
    // PD, MR, MW

    static MemorySegment allocPd(MemorySegment ctx) {
        MemorySegment cs = callState();
        MemorySegment pd;
        try {
            pd = (MemorySegment) ALLOC_PD.invokeExact(cs, ctx);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        return pointerResult("ibv_alloc_pd", pd, cs).reinterpret(IbvPdStruct.SIZE);
    }

    static void deallocPd(MemorySegment pd) {
        MemorySegment cs = callState();
        int rc;
        try {
            rc = (int) DEALLOC_PD.invokeExact(cs, pd);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        intResult("ibv_dealloc_pd", rc, cs);
    }

    /**
     * Registers memory. {@code ibv_reg_mr} is a header macro that calls the exported {@code ibv_reg_mr} or,
     * for optional access flags, {@code ibv_reg_mr_iova2}; we call {@code ibv_reg_mr_iova2} with
     * {@code iova = addr} (the same registration), falling back to {@code ibv_reg_mr} on old libraries.
     */
    static MemorySegment regMr(MemorySegment pd, MemorySegment addr, long length, int access) {
        MemorySegment cs = callState();
        MemorySegment mr;
        String call;
        try {
            if (REG_MR_IOVA2 != null) {
                call = "ibv_reg_mr_iova2";
                mr = (MemorySegment) REG_MR_IOVA2.invokeExact(cs, pd, addr, length, addr.address(), access);
            } else {
                call = "ibv_reg_mr";
                mr = (MemorySegment) REG_MR.invokeExact(cs, pd, addr, length, access);
            }
        } catch (Throwable t) {
            throw rethrow(t);
        }
        return pointerResult(call + "(" + length + " bytes, access 0x" + Integer.toHexString(access) + ")", mr, cs)
                .reinterpret(IbvMrStruct.SIZE);
    }

    static void deregMr(MemorySegment mr) {
        MemorySegment cs = callState();
        int rc;
        try {
            rc = (int) DEREG_MR.invokeExact(cs, mr);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        intResult("ibv_dereg_mr", rc, cs);
    }

    /** {@code ibv_alloc_mw} (static inline → {@code ops.alloc_mw}; EOPNOTSUPP when the provider has none). */
    static MemorySegment allocMw(MemorySegment ctx, MemorySegment pd, int type) {
        MemorySegment fn = ctx.get(ADDRESS, IbvContextStruct.OPS_ALLOC_MW);
        if (fn.address() == 0) {
            throw new VerbsException("ibv_alloc_mw(type " + type + ")", Errno.EOPNOTSUPP, "the provider has no memory windows");
        }
        MemorySegment cs = callState();
        MemorySegment mw;
        try {
            mw = (MemorySegment) OPS_ALLOC_MW.invokeExact(fn, cs, pd, type);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        return pointerResult("ibv_alloc_mw(type " + type + ")", mw, cs).reinterpret(IbvMwStruct.SIZE);
    }

    /**
     * {@code ibv_query_device_ex} (static inline → {@code verbs_context.query_device_ex}) with no input, filling
     * {@code attr} ({@code attr.byteSize()} bytes of a {@code struct ibv_device_attr_ex}). Returns false, as the header's
     * inline does before falling back to {@code ibv_query_device}, when the provider has no such op or answers
     * EOPNOTSUPP / ENOSYS.
     */
    static boolean queryDeviceEx(MemorySegment ctx, MemorySegment attr) {
        if (ctx.get(ADDRESS, IbvContextStruct.ABI_COMPAT).address() != IbvContextStruct.ABI_IS_EXTENDED) {
            return false;
        }
        MemorySegment vctx = MemorySegment.ofAddress(ctx.address() - IbvContextStruct.VERBS_CONTEXT)
                .reinterpret(IbvContextStruct.VERBS_CONTEXT);
        long filled = vctx.get(JAVA_LONG, IbvContextStruct.VERBS_SZ);
        if (filled < IbvContextStruct.VERBS_SIZE - IbvContextStruct.VERBS_QUERY_DEVICE_EX) {
            return false; // an older provider's verbs_context ends before the op
        }
        MemorySegment fn = vctx.get(ADDRESS, IbvContextStruct.VERBS_QUERY_DEVICE_EX);
        if (fn.address() == 0 || VERBS_QUERY_DEVICE_EX == null) {
            return false;
        }
        int rc;
        try {
            rc = (int) VERBS_QUERY_DEVICE_EX.invokeExact(fn, ctx, MemorySegment.NULL, attr, attr.byteSize());
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (rc == Errno.EOPNOTSUPP || rc == Errno.ENOSYS) {
            return false;
        }
        if (rc != 0) {
            throw new VerbsException("ibv_query_device_ex", rc);
        }
        return true;
    }

    /** {@code ibv_dealloc_mw} (static inline → {@code ops.dealloc_mw}). */
    static void deallocMw(MemorySegment ctx, MemorySegment mw) {
        MemorySegment fn = ctx.get(ADDRESS, IbvContextStruct.OPS_DEALLOC_MW);
        MemorySegment cs = callState();
        int rc;
        try {
            rc = (int) OPS_DEALLOC_MW.invokeExact(fn, cs, mw);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        intResult("ibv_dealloc_mw", rc, cs);
    }

    /** {@code ops.bind_mw} for type-1 windows (returns errno; type-2 windows are bound with a BIND_MW send WR). */
    static int bindMw(MemorySegment ctx, MemorySegment qp, MemorySegment mw, MemorySegment mwBind) {
        MemorySegment fn = ctx.get(ADDRESS, IbvContextStruct.OPS_BIND_MW);
        if (fn.address() == 0) {
            return Errno.EOPNOTSUPP;
        }
        MemorySegment cs = callState();
        try {
            int rc = (int) OPS_BIND_MW.invokeExact(fn, cs, qp, mw, mwBind);
            return VerbsException.errnoOf(rc, errno(cs));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    // ------------------------------------------------------------------------------------------------------------
    // completion channel and CQ

    static MemorySegment createCompChannel(MemorySegment ctx) {
        MemorySegment cs = callState();
        MemorySegment ch;
        try {
            ch = (MemorySegment) CREATE_COMP_CHANNEL.invokeExact(cs, ctx);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        return pointerResult("ibv_create_comp_channel", ch, cs).reinterpret(IbvCompChannelStruct.SIZE);
    }

    static void destroyCompChannel(MemorySegment channel) {
        MemorySegment cs = callState();
        int rc;
        try {
            rc = (int) DESTROY_COMP_CHANNEL.invokeExact(cs, channel);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        intResult("ibv_destroy_comp_channel", rc, cs);
    }

    static MemorySegment createCq(MemorySegment ctx, int cqe, MemorySegment cqContext, MemorySegment channel, int vector) {
        MemorySegment cs = callState();
        MemorySegment cq;
        try {
            cq = (MemorySegment) CREATE_CQ.invokeExact(cs, ctx, cqe, cqContext, channel, vector);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        return pointerResult("ibv_create_cq(cqe " + cqe + ")", cq, cs).reinterpret(IbvCqStruct.SIZE);
    }

    static void destroyCq(MemorySegment cq) {
        MemorySegment cs = callState();
        int rc;
        try {
            rc = (int) DESTROY_CQ.invokeExact(cs, cq);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        intResult("ibv_destroy_cq", rc, cs);
    }

    /** {@code ibv_get_cq_event}: blocks until the channel has an event; writes the CQ and its context into the slots. */
    static void getCqEvent(MemorySegment channel, MemorySegment cqOut, MemorySegment cqContextOut) {
        MemorySegment cs = callState();
        int rc;
        try {
            rc = (int) GET_CQ_EVENT.invokeExact(cs, channel, cqOut, cqContextOut);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        intResult("ibv_get_cq_event", rc, cs);
    }

    static void ackCqEvents(MemorySegment cq, int count) {
        try {
            ACK_CQ_EVENTS.invokeExact(cq, count);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code ibv_poll_cq} (static inline → {@code ops.poll_cq}): number of completions, or a negative value on error. */
    static int pollCq(MemorySegment fn, MemorySegment cq, int max, MemorySegment wcArray) {
        try {
            return (int) OPS_POLL_CQ.invokeExact(fn, cq, max, wcArray);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code ibv_req_notify_cq} (static inline → {@code ops.req_notify_cq}): returns errno (0 = armed). */
    static int reqNotifyCq(MemorySegment fn, MemorySegment cq, boolean solicitedOnly) {
        try {
            int rc = (int) OPS_REQ_NOTIFY_CQ.invokeExact(fn, cq, solicitedOnly ? 1 : 0);
            return VerbsException.errnoOf(rc, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    // ------------------------------------------------------------------------------------------------------------
    // SRQ

    static MemorySegment createSrq(MemorySegment pd, MemorySegment initAttr) {
        MemorySegment cs = callState();
        MemorySegment srq;
        try {
            srq = (MemorySegment) CREATE_SRQ.invokeExact(cs, pd, initAttr);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        return pointerResult("ibv_create_srq", srq, cs).reinterpret(IbvSrqStruct.SIZE);
    }

    static void modifySrq(MemorySegment srq, MemorySegment attr, int mask, String what) {
        MemorySegment cs = callState();
        int rc;
        try {
            rc = (int) MODIFY_SRQ.invokeExact(cs, srq, attr, mask);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        intResult("ibv_modify_srq(" + what + ")", rc, cs);
    }

    static void querySrq(MemorySegment srq, MemorySegment attr) {
        MemorySegment cs = callState();
        int rc;
        try {
            rc = (int) QUERY_SRQ.invokeExact(cs, srq, attr);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        intResult("ibv_query_srq", rc, cs);
    }

    static void destroySrq(MemorySegment srq) {
        MemorySegment cs = callState();
        int rc;
        try {
            rc = (int) DESTROY_SRQ.invokeExact(cs, srq);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        intResult("ibv_destroy_srq", rc, cs);
    }

    /** {@code ibv_post_srq_recv} (static inline → {@code ops.post_srq_recv}): returns errno (0 = posted). */
    static int postSrqRecv(MemorySegment fn, MemorySegment srq, MemorySegment wr, MemorySegment badWr) {
        try {
            int rc = (int) OPS_POST_SRQ_RECV.invokeExact(fn, srq, wr, badWr);
            return VerbsException.errnoOf(rc, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    // ------------------------------------------------------------------------------------------------------------
    // QP

    static MemorySegment createQp(MemorySegment pd, MemorySegment initAttr) {
        MemorySegment cs = callState();
        MemorySegment qp;
        try {
            qp = (MemorySegment) CREATE_QP.invokeExact(cs, pd, initAttr);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        return pointerResult("ibv_create_qp", qp, cs).reinterpret(IbvQpStruct.SIZE);
    }

    static void modifyQp(MemorySegment qp, MemorySegment attr, int mask, String what) {
        MemorySegment cs = callState();
        int rc;
        try {
            rc = (int) MODIFY_QP.invokeExact(cs, qp, attr, mask);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        intResult("ibv_modify_qp(" + what + ")", rc, cs);
    }

    static void queryQp(MemorySegment qp, MemorySegment attr, int mask, MemorySegment initAttr) {
        MemorySegment cs = callState();
        int rc;
        try {
            rc = (int) QUERY_QP.invokeExact(cs, qp, attr, mask, initAttr);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        intResult("ibv_query_qp", rc, cs);
    }

    static void destroyQp(MemorySegment qp) {
        MemorySegment cs = callState();
        int rc;
        try {
            rc = (int) DESTROY_QP.invokeExact(cs, qp);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        intResult("ibv_destroy_qp", rc, cs);
    }

    /** {@code ibv_post_send} (static inline → {@code ops.post_send}): returns errno (0 = posted). */
    static int postSend(MemorySegment fn, MemorySegment qp, MemorySegment wr, MemorySegment badWr) {
        try {
            int rc = (int) OPS_POST_SEND.invokeExact(fn, qp, wr, badWr);
            return VerbsException.errnoOf(rc, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code ibv_post_recv} (static inline → {@code ops.post_recv}): returns errno (0 = posted). */
    static int postRecv(MemorySegment fn, MemorySegment qp, MemorySegment wr, MemorySegment badWr) {
        try {
            int rc = (int) OPS_POST_RECV.invokeExact(fn, qp, wr, badWr);
            return VerbsException.errnoOf(rc, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    // ------------------------------------------------------------------------------------------------------------
    // async events

    static void getAsyncEvent(MemorySegment ctx, MemorySegment event) {
        MemorySegment cs = callState();
        int rc;
        try {
            rc = (int) GET_ASYNC_EVENT.invokeExact(cs, ctx, event);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        intResult("ibv_get_async_event", rc, cs);
    }

    static void ackAsyncEvent(MemorySegment event) {
        try {
            ACK_ASYNC_EVENT.invokeExact(event);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }
}
