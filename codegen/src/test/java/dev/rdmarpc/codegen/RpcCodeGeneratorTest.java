package dev.rdmarpc.codegen;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.Edition;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileOptions;
import com.google.protobuf.DescriptorProtos.MethodDescriptorProto;
import com.google.protobuf.DescriptorProtos.ServiceDescriptorProto;
import com.google.protobuf.DescriptorProtos.SourceCodeInfo;
import com.google.protobuf.EmptyProto;
import com.google.protobuf.compiler.PluginProtos.CodeGeneratorRequest;
import com.google.protobuf.compiler.PluginProtos.CodeGeneratorResponse;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Requests in, responses out: generated files, their names and contents, and errors in the error field. */
class RpcCodeGeneratorTest {

    private static final FileDescriptorProto EMPTY = EmptyProto.getDescriptor().toProto();

    private static MethodDescriptorProto rpc(String name, String in, String out, boolean clientStreaming, boolean serverStreaming) {
        return MethodDescriptorProto.newBuilder().setName(name).setInputType(in).setOutputType(out)
                .setClientStreaming(clientStreaming).setServerStreaming(serverStreaming).build();
    }

    /** kv.proto: package kv, java_package com.example.kv, one service using a nested type and Empty. */
    private static FileDescriptorProto kvFile() {
        return FileDescriptorProto.newBuilder()
                .setName("kv/kv.proto")
                .setPackage("kv")
                .setSyntax("proto3")
                .addDependency("google/protobuf/empty.proto")
                .setOptions(FileOptions.newBuilder().setJavaPackage("com.example.kv"))
                .addMessageType(DescriptorProto.newBuilder().setName("Put")
                        .addNestedType(DescriptorProto.newBuilder().setName("Request")))
                .addService(ServiceDescriptorProto.newBuilder().setName("Store")
                        .addMethod(rpc("BatchPut", ".kv.Put.Request", ".google.protobuf.Empty", false, false))
                        .addMethod(rpc("Watch", ".google.protobuf.Empty", ".kv.Put.Request", false, true))
                        .addMethod(rpc("Upload", ".kv.Put.Request", ".google.protobuf.Empty", true, false))
                        .addMethod(rpc("Chat", ".kv.Put.Request", ".kv.Put.Request", true, true)))
                .setSourceCodeInfo(SourceCodeInfo.newBuilder()
                        .addLocation(SourceCodeInfo.Location.newBuilder().addPath(6).addPath(0)
                                .setLeadingComments(" The store.\n Ends with */ and {@code x}.\n"))
                        .addLocation(SourceCodeInfo.Location.newBuilder().addPath(6).addPath(0).addPath(2).addPath(1)
                                .setLeadingComments(" Streams changes.\n")))
                .build();
    }

    private static CodeGeneratorRequest request(FileDescriptorProto... files) {
        CodeGeneratorRequest.Builder b = CodeGeneratorRequest.newBuilder().addProtoFile(EMPTY);
        for (FileDescriptorProto f : files) {
            b.addProtoFile(f).addFileToGenerate(f.getName());
        }
        return b.build();
    }

    @Test
    void generatesOneClassPerServiceInTheJavaPackage() {
        CodeGeneratorResponse response = RpcCodeGenerator.generate(request(kvFile()));
        assertFalse(response.hasError(), response.getError());
        assertEquals(CodeGeneratorResponse.Feature.FEATURE_PROTO3_OPTIONAL_VALUE
                | CodeGeneratorResponse.Feature.FEATURE_SUPPORTS_EDITIONS_VALUE, response.getSupportedFeatures());
        assertEquals(Edition.EDITION_PROTO2_VALUE, response.getMinimumEdition());
        assertEquals(Edition.EDITION_2024_VALUE, response.getMaximumEdition());
        assertEquals(1, response.getFileCount());
        assertEquals("com/example/kv/StoreRpc.java", response.getFile(0).getName());

        String src = response.getFile(0).getContent();
        assertTrue(src.contains("package com.example.kv;"));
        assertTrue(src.contains("public final class StoreRpc {"));
        assertTrue(src.contains("public static final java.lang.String SERVICE_NAME = \"kv.Store\";"));
        assertTrue(src.contains("MethodDescriptor<com.example.kv.Kv.Put.Request, com.google.protobuf.Empty> getBatchPutMethod()"));
        assertTrue(src.contains("generateFullMethodName(SERVICE_NAME, \"BatchPut\")"));
        assertTrue(src.contains("MethodType.SERVER_STREAMING"));
        assertTrue(src.contains("MethodType.CLIENT_STREAMING"));
        assertTrue(src.contains("MethodType.BIDI_STREAMING"));
        assertTrue(src.contains("public void batchPut(com.example.kv.Kv.Put.Request request,"));
        assertTrue(src.contains("public java.util.Iterator<com.example.kv.Kv.Put.Request> watch(com.google.protobuf.Empty request)"));
        assertTrue(src.contains("public java.util.concurrent.CompletableFuture<com.google.protobuf.Empty> batchPut("));
        assertTrue(src.contains(" *  The store.\n *  Ends with *&#47; and {&#64;code x}.\n"), src);
        assertTrue(src.contains(" *  Streams changes.\n"));
    }

    @Test
    void multipleFilesPutsMessagesInThePackage() {
        FileDescriptorProto f = kvFile().toBuilder()
                .setOptions(FileOptions.newBuilder().setJavaPackage("com.example.kv").setJavaMultipleFiles(true)).build();
        String src = RpcCodeGenerator.generate(request(f)).getFile(0).getContent();
        assertTrue(src.contains("com.example.kv.Put.Request request"), src);
    }

    @Test
    void fileWithoutPackageGoesToTheUnnamedPackage() {
        FileDescriptorProto f = FileDescriptorProto.newBuilder().setName("ping.proto").setSyntax("proto3")
                .addMessageType(DescriptorProto.newBuilder().setName("Ping"))
                .addService(ServiceDescriptorProto.newBuilder().setName("Pinger")
                        .addMethod(rpc("Ping", ".Ping", ".Ping", false, false)))
                .build();
        CodeGeneratorResponse response = RpcCodeGenerator.generate(request(f));
        assertFalse(response.hasError(), response.getError());
        assertEquals("PingerRpc.java", response.getFile(0).getName());
        String src = response.getFile(0).getContent();
        assertFalse(src.contains("package "));
        assertTrue(src.contains("SERVICE_NAME = \"Pinger\""));
        // ping.proto has a message Ping, so the outer class is PingOuterClass.
        assertTrue(src.contains("PingOuterClass.Ping request"), src);
    }

    @Test
    void filesWithoutServicesProduceNothing() {
        FileDescriptorProto f = FileDescriptorProto.newBuilder().setName("m.proto").setPackage("m")
                .addMessageType(DescriptorProto.newBuilder().setName("M")).build();
        CodeGeneratorResponse response = RpcCodeGenerator.generate(request(f));
        assertFalse(response.hasError());
        assertEquals(0, response.getFileCount());
    }

    @Test
    void errorsGoToTheErrorField() {
        FileDescriptorProto unknownType = kvFile().toBuilder().setService(0, ServiceDescriptorProto.newBuilder().setName("S")
                .addMethod(rpc("M", ".kv.Missing", ".kv.Put", false, false))).build();
        CodeGeneratorResponse r1 = RpcCodeGenerator.generate(request(unknownType));
        assertTrue(r1.getError().contains(".kv.Missing"), r1.getError());
        assertEquals(0, r1.getFileCount());

        FileDescriptorProto clash = kvFile().toBuilder().setService(0, ServiceDescriptorProto.newBuilder().setName("S")
                .addMethod(rpc("Get_all", ".kv.Put", ".kv.Put", false, false))
                .addMethod(rpc("GetAll", ".kv.Put", ".kv.Put", false, false))).build();
        CodeGeneratorResponse r2 = RpcCodeGenerator.generate(request(clash));
        assertTrue(r2.getError().contains("getAll"), r2.getError());

        FileDescriptorProto getterClash = kvFile().toBuilder().setService(0, ServiceDescriptorProto.newBuilder().setName("S")
                .addMethod(rpc("_stats", ".kv.Put", ".kv.Put", false, false))
                .addMethod(rpc("stats", ".kv.Put", ".kv.Put", false, false))).build();
        CodeGeneratorResponse getterError = RpcCodeGenerator.generate(request(getterClash));
        assertTrue(getterError.getError().contains("descriptor getter getStatsMethod()"), getterError.getError());

        CodeGeneratorResponse r3 = RpcCodeGenerator.generate(request(kvFile()).toBuilder().setParameter("lite").build());
        assertTrue(r3.getError().contains("unknown rdmarpc codegen option 'lite'"), r3.getError());

        CodeGeneratorResponse r4 = RpcCodeGenerator.generate(CodeGeneratorRequest.newBuilder().addFileToGenerate("nope.proto").build());
        assertTrue(r4.getError().contains("nope.proto"), r4.getError());
    }

    @Test
    void runReadsAndWritesTheWireFormat() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        RpcCodeGenerator.run(new ByteArrayInputStream(request(kvFile()).toByteArray()), out);
        CodeGeneratorResponse response = CodeGeneratorResponse.parseFrom(out.toByteArray());
        assertFalse(response.hasError(), response.getError());
        assertEquals(1, response.getFileCount());

        out.reset();
        RpcCodeGenerator.run(new ByteArrayInputStream(new byte[] {(byte) 0xff, 0x01}), out);
        assertTrue(CodeGeneratorResponse.parseFrom(out.toByteArray()).getError().contains("cannot parse"));
    }

    /** As protoc runs it: a fresh JVM (class initialization order included) reading stdin and writing stdout. */
    @Test
    void mainWorksInAFreshJvm() throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process p = new ProcessBuilder(List.of(java.toString(), "-cp", System.getProperty("java.class.path"),
                RpcCodeGenerator.class.getName()))
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        try (var stdin = p.getOutputStream()) {
            request(kvFile()).writeTo(stdin);
        }
        byte[] stdout = p.getInputStream().readAllBytes();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue());
        CodeGeneratorResponse response = CodeGeneratorResponse.parseFrom(stdout);
        assertFalse(response.hasError(), response.getError());
        assertEquals("com/example/kv/StoreRpc.java", response.getFile(0).getName());
    }
}
