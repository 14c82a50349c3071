package dev.rdmarpc.architecture;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import dev.rdmarpc.core.RawMetadata;

import java.util.List;
import java.util.stream.Stream;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideOutsideOfPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * The layering between rdmarpc's modules and packages, checked on the main classes of every module. Each rule is
 * an {@code @ArchTest} method: Surefire 3.5.3 does not run {@code @ArchTest} fields.
 */
@AnalyzeClasses(packages = "dev.rdmarpc", importOptions = ImportOption.DoNotIncludeTests.class)
class LayeringTest {
    /** The packages of rpc-core a transport may use: the API, the transport SPI, the wire protocol and buffers. */
    private static final String[] CORE_FOR_TRANSPORTS = {
            "dev.rdmarpc.core", "dev.rdmarpc.core.spi", "dev.rdmarpc.core.protocol", "dev.rdmarpc.core.buffer"};

    private static final String INTERNAL = "dev.rdmarpc.core.internal";
    private static final String CORE_INTERNAL = INTERNAL + "..";

    /**
     * The only classes outside {@code core.internal} (with their nested classes) that may use it: the entry points that
     * build channels, connections and servers (and the builder options and client lifecycle they share), the stub
     * helpers' fast paths, the shared executor and the upgrade policy.
     */
    private static final List<String> REACHING_INTERNAL = List.of(
            "dev.rdmarpc.core.RpcChannel",
            "dev.rdmarpc.core.RpcConnection",
            "dev.rdmarpc.core.RpcServer",
            "dev.rdmarpc.core.CommonBuilder",
            "dev.rdmarpc.core.ChannelHandle",
            "dev.rdmarpc.core.ClientCalls",
            "dev.rdmarpc.core.ServerCalls",
            "dev.rdmarpc.core.CallExecutors",
            "dev.rdmarpc.core.UpgradePolicy");

    @ArchTest
    static void coreDependsOnNoTransportGrpcNettyOrUpperModule(JavaClasses classes) {
        noClasses()
                .that().resideInAPackage("dev.rdmarpc.core..")
                .should().dependOnClassesThat().resideInAnyPackage(
                        "dev.rdmarpc.transport..", "io.grpc..", "io.netty..",
                        "dev.rdmarpc.grpc..", "dev.rdmarpc.codegen..", "dev.rdmarpc.samples..", "dev.rdmarpc.bench..")
                .because("rpc-core is the bottom layer: transports plug into its SPI, everything else builds on it")
                .check(classes);
    }

    @ArchTest
    static void tcpTransportUsesOnlyCoreApiAndSpi(JavaClasses classes) {
        transportUsesOnlyCoreApiAndSpi("dev.rdmarpc.transport.tcp").check(classes);
    }

    @ArchTest
    static void rdmaTransportUsesOnlyCoreApiAndSpi(JavaClasses classes) {
        transportUsesOnlyCoreApiAndSpi("dev.rdmarpc.transport.rdma").check(classes);
    }

    @ArchTest
    static void grpcCompatUsesNoCoreInternalsOrTransports(JavaClasses classes) {
        noClasses()
                .that().resideInAPackage("dev.rdmarpc.grpc..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.rdmarpc.core.internal..", "dev.rdmarpc.transport..")
                .because("grpc-compat is built on rpc-core's public API; transports are found at run time")
                .check(classes);
    }

    @ArchTest
    static void nothingDependsOnSamples(JavaClasses classes) {
        noClasses()
                .that().resideOutsideOfPackage("dev.rdmarpc.samples..")
                .should().dependOnClassesThat().resideInAPackage("dev.rdmarpc.samples..")
                .check(classes);
    }

    @ArchTest
    static void nothingDependsOnBenchmarks(JavaClasses classes) {
        noClasses()
                .that().resideOutsideOfPackage("dev.rdmarpc.bench..")
                .should().dependOnClassesThat().resideInAPackage("dev.rdmarpc.bench..")
                .check(classes);
    }

    @ArchTest
    static void coreInternalsOnlyBehindTheNamedApiClasses(JavaClasses classes) {
        classes()
                .that().resideInAPackage(CORE_INTERNAL)
                .should().onlyHaveDependentClassesThat(resideInAPackage(CORE_INTERNAL).or(isOrIsNestedInAnyOf(REACHING_INTERNAL)))
                .because("the public API reaches the implementation only through the classes named in REACHING_INTERNAL")
                .check(classes);
    }

    /** Keeps {@link #REACHING_INTERNAL} exact: a class that no longer reaches {@code internal} leaves the list. */
    @ArchTest
    static void everyClassAllowedToReachInternalsDoesSo(JavaClasses classes) {
        for (String name : REACHING_INTERNAL) {
            if (!classes.contain(name)) {
                throw new AssertionError(name + " is allowed to reach " + CORE_INTERNAL + " but was not imported: remove it from the list");
            }
            boolean reaches = classes.stream()
                    .filter(c -> isOrIsNestedIn(c, name))
                    .flatMap(c -> c.getDirectDependenciesFromSelf().stream())
                    .anyMatch(d -> resideInAPackage(CORE_INTERNAL).test(d.getTargetClass()));
            if (!reaches) {
                throw new AssertionError(name + " does not depend on " + CORE_INTERNAL + ": remove it from the list");
            }
        }
    }

    @ArchTest
    static void flowExecAndMetricsUseNoOtherInternalPackage(JavaClasses classes) {
        for (String leaf : List.of("flow", "exec", "metrics")) {
            String own = INTERNAL + "." + leaf + "..";
            noClasses()
                    .that().resideInAPackage(own)
                    .should().dependOnClassesThat(resideInAPackage(CORE_INTERNAL).and(resideOutsideOfPackage(own)))
                    .because("connection flow control, callback execution and metrics are the bottom of core's"
                            + " internals: the calls, connections, channels and servers use them, never the reverse")
                    .check(classes);
        }
    }

    @ArchTest
    static void connectionsUseOnlyFlowExecAndMetrics(JavaClasses classes) {
        classes()
                .that().resideInAPackage(INTERNAL + ".connection..")
                .should().onlyDependOnClassesThat(resideOutsideOfPackage(CORE_INTERNAL).or(resideInAnyPackage(
                        INTERNAL + ".connection..", INTERNAL + ".flow..", INTERNAL + ".exec..", INTERNAL + ".metrics..")))
                .because("a connection knows nothing of the calls, channels and servers built on it")
                .check(classes);
    }

    @ArchTest
    static void onlyTheCallsReachTheChannelAndTheServer(JavaClasses classes) {
        List<String> below = List.of("flow", "exec", "metrics", "connection", "attachment");
        for (String side : List.of("channel", "server")) {
            String other = side.equals("channel") ? "server" : "channel";
            String[] packages = Stream.concat(below.stream(), Stream.of(other))
                    .map(p -> INTERNAL + "." + p + "..").toArray(String[]::new);
            noClasses()
                    .that().resideInAnyPackage(packages)
                    .should().dependOnClassesThat().resideInAPackage(INTERNAL + "." + side + "..")
                    .because("the client's and the server's connections sit on top: only the calls (and the API's"
                            + " entry points) reach them, and neither side reaches the other")
                    .check(classes);
        }
    }

    @ArchTest
    static void rawMetadataOnlyForWireCodecAndGrpcCompat(JavaClasses classes) {
        classes()
                .that().belongToAnyOf(RawMetadata.class)
                .should().onlyHaveDependentClassesThat().resideInAnyPackage("dev.rdmarpc.core..", "dev.rdmarpc.grpc..",
                        "dev.rdmarpc.transport.tcp..")
                .because("raw metadata entries are for the wire codecs (rdmarpc's, and the HTTP/2 bridges' translation) and the"
                        + " grpc metadata bridge, not for applications")
                .check(classes);
    }

    /** Guards the rules above against passing on a class path that lacks a module. */
    @ArchTest
    static void everyModuleIsImported(JavaClasses classes) {
        List<String> packages = List.of("dev.rdmarpc.core", "dev.rdmarpc.transport.tcp", "dev.rdmarpc.transport.rdma",
                "dev.rdmarpc.codegen", "dev.rdmarpc.grpc", "dev.rdmarpc.samples", "dev.rdmarpc.bench");
        for (String p : packages) {
            if (!classes.containPackage(p)) {
                throw new AssertionError("no main class of package " + p + " was imported: is its module a dependency?");
            }
        }
    }

    private static DescribedPredicate<JavaClass> isOrIsNestedInAnyOf(List<String> names) {
        return DescribedPredicate.describe("are one of " + names + " or nested in one",
                c -> names.stream().anyMatch(name -> isOrIsNestedIn(c, name)));
    }

    private static boolean isOrIsNestedIn(JavaClass c, String name) {
        return c.getName().equals(name) || c.getName().startsWith(name + "$");
    }

    private static ArchRule transportUsesOnlyCoreApiAndSpi(String transportPackage) {
        String[] allowed = new String[CORE_FOR_TRANSPORTS.length + 1];
        System.arraycopy(CORE_FOR_TRANSPORTS, 0, allowed, 0, CORE_FOR_TRANSPORTS.length);
        allowed[CORE_FOR_TRANSPORTS.length] = transportPackage + "..";
        return classes()
                .that().resideInAPackage(transportPackage + "..")
                .should().onlyDependOnClassesThat(resideOutsideOfPackage("dev.rdmarpc..").or(resideInAnyPackage(allowed)))
                .because("a transport plugs into rpc-core's SPI and uses no other rdmarpc module, nor core's internals");
    }
}
