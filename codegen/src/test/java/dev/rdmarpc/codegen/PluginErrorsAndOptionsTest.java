package dev.rdmarpc.codegen;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileOptions;
import com.google.protobuf.DescriptorProtos.MessageOptions;
import com.google.protobuf.DescriptorProtos.MethodDescriptorProto;
import com.google.protobuf.DescriptorProtos.ServiceDescriptorProto;
import com.google.protobuf.compiler.PluginProtos.CodeGeneratorRequest;
import com.google.protobuf.compiler.PluginProtos.CodeGeneratorResponse;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What cannot be generated is a plugin error naming the file, the service and the rpc; the attachments= option
 * selects the rpcs that get attachment methods, and a selector that matches nothing is an error too.
 */
class PluginErrorsAndOptionsTest {

    private static MethodDescriptorProto rpc(String name, String in, String out) {
        return MethodDescriptorProto.newBuilder().setName(name).setInputType(in).setOutputType(out).build();
    }

    /** shop/shop.proto, package shop: messages Item (with a map field, so a nested ItemsEntry) and Order, service Shop. */
    private static FileDescriptorProto.Builder shop() {
        DescriptorProto entry = DescriptorProto.newBuilder().setName("TagsEntry")
                .setOptions(MessageOptions.newBuilder().setMapEntry(true))
                .addField(FieldDescriptorProto.newBuilder().setName("key").setNumber(1).setType(FieldDescriptorProto.Type.TYPE_STRING))
                .addField(FieldDescriptorProto.newBuilder().setName("value").setNumber(2).setType(FieldDescriptorProto.Type.TYPE_STRING))
                .build();
        return FileDescriptorProto.newBuilder().setName("shop/shop.proto").setPackage("shop").setSyntax("proto3")
                .setOptions(FileOptions.newBuilder().setJavaPackage("com.example.shop"))
                .addMessageType(DescriptorProto.newBuilder().setName("Item").addNestedType(entry))
                .addMessageType(DescriptorProto.newBuilder().setName("Order"))
                .addService(ServiceDescriptorProto.newBuilder().setName("Shop")
                        .addMethod(rpc("Buy", ".shop.Order", ".shop.Item"))
                        .addMethod(rpc("Sell", ".shop.Item", ".shop.Order")));
    }

    private static CodeGeneratorResponse generate(String parameter, FileDescriptorProto file) {
        return RpcCodeGenerator.generate(CodeGeneratorRequest.newBuilder().setParameter(parameter)
                .addProtoFile(file).addFileToGenerate(file.getName()).build());
    }

    @Test
    void aMapEntryAsAnRpcTypeIsAnErrorNamingFileServiceAndRpc() {
        FileDescriptorProto file = shop().setService(0, ServiceDescriptorProto.newBuilder().setName("Shop")
                .addMethod(rpc("Tags", ".shop.Item", ".shop.Item.TagsEntry"))).build();
        String error = generate("", file).getError();
        assertTrue(error.startsWith("shop/shop.proto: service shop.Shop: rpc Tags: .shop.Item.TagsEntry is the entry type"
                + " of a map field"), error);
    }

    @Test
    void anUnnamedPackageClassHiddenByAGeneratedNestedClassIsAnError() {
        // shop_stub.proto without a package: its outer class ShopStub is the name of ShopRpc's nested ShopStub
        FileDescriptorProto file = shop().setName("shop_stub.proto").clearPackage().clearOptions()
                .setService(0, ServiceDescriptorProto.newBuilder().setName("Shop").addMethod(rpc("Buy", ".Order", ".Item")))
                .build();
        String error = generate("", file).getError();
        assertTrue(error.startsWith("shop_stub.proto: service Shop: rpc Buy: the class ShopStub.Order is in the unnamed"
                + " package, where the generated class's own ShopStub hides it"), error);
        assertTrue(error.contains("set java_package"), error);
    }

    @Test
    void aMessageClassNamedLikeTheServiceClassIsAnError() {
        FileDescriptorProto file = shop().setOptions(FileOptions.newBuilder().setJavaPackage("com.example.shop")
                .setJavaMultipleFiles(true)).addMessageType(DescriptorProto.newBuilder().setName("ShopRpc")).build();
        String error = generate("", file).getError();
        assertTrue(error.startsWith("shop/shop.proto: service shop.Shop: protoc's Java generator already writes a class"
                + " ShopRpc into package com.example.shop"), error);
    }

    @Test
    void classesObscuredByAMessageAreImportedAndWhatCanBeWrittenNeitherWayIsAnError() {
        FileDescriptorProto withDev = shop().setOptions(FileOptions.newBuilder().setJavaPackage("com.example.shop")
                .setJavaMultipleFiles(true)).addMessageType(DescriptorProto.newBuilder().setName("dev")).build();
        CodeGeneratorResponse imported = generate("", withDev);
        assertFalse(imported.hasError(), imported.getError());
        String src = imported.getFile(0).getContent();
        assertTrue(src.contains("\nimport dev.rdmarpc.core.StreamObserver;\n"), src);
        assertTrue(src.contains("public void buy(com.example.shop.Order request, StreamObserver<com.example.shop.Item>"), src);
        assertTrue(src.lines().filter(l -> !l.startsWith("import ") && !l.startsWith("//")).noneMatch(l -> l.contains("dev.rdmarpc.")),
                "nothing written qualified by dev: " + src);

        // in the unnamed package a message Channel cannot be imported, and a message dev obscures dev.rdmarpc.core.Channel
        FileDescriptorProto unnamed = shop().setName("m.proto").clearPackage()
                .setOptions(FileOptions.newBuilder().setJavaMultipleFiles(true))
                .addMessageType(DescriptorProto.newBuilder().setName("dev"))
                .addMessageType(DescriptorProto.newBuilder().setName("Channel"))
                .setService(0, ServiceDescriptorProto.newBuilder().setName("Shop").addMethod(rpc("Buy", ".Channel", ".Item")))
                .build();
        String error = generate("", unnamed).getError();
        assertTrue(error.startsWith("m.proto: service Shop: the class dev.rdmarpc.core.Channel must be imported"), error);
    }

    @Test
    void attachmentMethodsOnlyForTheSelectedRpcs() {
        FileDescriptorProto file = shop().build();
        assertFalse(generate("", file).getFile(0).getContent().contains("WithAttachment"), "none by default");
        for (String selector : new String[] {"*", "shop/shop.proto", "shop.Shop", " shop.Shop/Buy , attachments=shop.Shop/Sell"}) {
            CodeGeneratorResponse r = generate("attachments=" + selector, file);
            assertFalse(r.hasError(), r.getError());
            String src = r.getFile(0).getContent();
            assertTrue(src.contains("public void buyWithAttachment(") && src.contains("public void sellWithAttachment("), selector);
        }
        String one = generate("attachments=shop.Shop/Sell", file).getFile(0).getContent();
        assertTrue(one.contains("sellWithAttachment(") && !one.contains("buyWithAttachment("), one);
        assertEquals(2, one.split("public void sellWithAttachment\\(", -1).length - 1, "in the ImplBase and the async stub");
    }

    @Test
    void unknownOptionsAndSelectorsThatMatchNothingAreErrors() {
        FileDescriptorProto file = shop().build();
        assertTrue(generate("attachment=shop.Shop", file).getError().contains("unknown rdmarpc codegen option 'attachment=shop.Shop'"));
        assertTrue(generate("attachments=", file).getError().contains("unknown rdmarpc codegen option 'attachments='"));
        String error = generate("attachments=shop.Shop/Steal,attachments=shop.Shop", file).getError();
        assertEquals("rdmarpc codegen option attachments=shop.Shop/Steal matches no file, service or rpc protoc asked to generate", error);
    }
}
