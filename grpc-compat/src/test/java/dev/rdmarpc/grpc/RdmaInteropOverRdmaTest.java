package dev.rdmarpc.grpc;

import dev.rdmarpc.core.spi.ConnectionUpgrader;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;
import org.junit.runner.Description;
import org.junit.runner.JUnitCore;
import org.junit.runner.Request;
import org.junit.runner.Result;
import org.junit.runner.notification.Failure;
import org.opentest4j.TestAbortedException;

import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * The interop suite over RDMA ({@link RdmaInteropRdma}), one dynamic test per case, for the RDMA
 * runs (scripts/rdma-vm-test.sh, RNIC hosts): the cases in {@link #REQUIRED} must pass; any other
 * case that runs and fails is reported as aborted with its failure, not hidden. Needs transport-rdma on the
 * test class path (a test dependency of this module). Only those cases run unless
 * {@code -Drdmarpc.grpc.interopAll=true} (the emulated RDMA guest is 15-35 times slower).
 */
@Tag("rdma")
class RdmaInteropOverRdmaTest {
    /** Cases that must pass over RDMA. */
    static final Set<String> REQUIRED = Set.of(
            "emptyUnary", "largeUnary", "clientStreaming", "serverStreaming", "pingPong", "emptyStream",
            "cancelAfterBegin", "cancelAfterFirstResponse", "timeoutOnSleepingServer", "veryLargeRequest",
            "veryLargeResponse", "exchangeMetadataUnaryCall", "exchangeMetadataStreamingCall",
            "statusCodeAndMessage", "deadlineExceeded");

    @org.junit.jupiter.api.BeforeAll
    static void rdmaTransportPresent() {
        if (ServiceLoader.load(ConnectionUpgrader.class).findFirst().isEmpty()) {
            fail("no RDMA connection upgrader on the test class path: transport-rdma must be a test dependency");
        }
    }

    @TestFactory
    List<DynamicTest> interopOverRdma() {
        List<DynamicTest> tests = new ArrayList<>();
        Description suite = Request.aClass(RdmaInteropRdma.class).getRunner().getDescription();
        for (Description d : suite.getChildren()) {
            String name = d.getMethodName();
            tests.add(DynamicTest.dynamicTest(name, () -> run(name)));
        }
        return tests;
    }

    private static void run(String name) {
        if (!REQUIRED.contains(name) && !Boolean.getBoolean("rdmarpc.grpc.interopAll")) {
            // the emulated RDMA guest is slow: the full suite runs with -Drdmarpc.grpc.interopAll=true
            throw new TestAbortedException("not in the RDMA set (-Drdmarpc.grpc.interopAll=true runs it)");
        }
        Result r = new JUnitCore().run(Request.method(RdmaInteropRdma.class, name));
        if (r.getRunCount() == 0) {
            fail("interop case " + name + " did not run");
        }
        if (!r.getFailures().isEmpty()) {
            Failure f = r.getFailures().get(0);
            if (REQUIRED.contains(name)) {
                fail("interop case " + name + " failed over RDMA: " + f.getMessage(), f.getException());
            }
            throw new TestAbortedException("not required over RDMA, failed: " + f.getMessage(), f.getException());
        }
        if (r.getAssumptionFailureCount() > 0 || r.getIgnoreCount() > 0) {
            throw new TestAbortedException("interop case " + name + " skipped itself");
        }
    }
}
