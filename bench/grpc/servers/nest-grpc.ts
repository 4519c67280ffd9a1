/**
 * NestJS as a gRPC microservice (@nestjs/microservices, Transport.GRPC over @grpc/grpc-js): a
 * controller with `@GrpcMethod('Greeter', 'Hello')` and the global same-work interceptor
 * (nest-interceptor.ts).
 */
import 'reflect-metadata';
import { Controller, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { GrpcMethod, type MicroserviceOptions, Transport } from '@nestjs/microservices';
import { SameWorkInterceptor } from './nest-interceptor.js';
import { exitOnSigterm } from './same-work.js';
import { HELLO, port, protoFile } from './serve.js';

class GreeterController {
  hello(): typeof HELLO {
    return HELLO;
  }
}
Reflect.decorate([Controller()], GreeterController);
Reflect.decorate(
  [GrpcMethod('Greeter', 'Hello')],
  GreeterController.prototype,
  'hello',
  Object.getOwnPropertyDescriptor(GreeterController.prototype, 'hello'),
);

class AppModule {}
Reflect.decorate([Module({ controllers: [GreeterController] })], AppModule);

const app = await NestFactory.createMicroservice<MicroserviceOptions>(AppModule, {
  transport: Transport.GRPC,
  options: { package: 'api.v1', protoPath: protoFile, url: `127.0.0.1:${port()}` },
  logger: ['error', 'warn'],
});
app.useGlobalInterceptors(new SameWorkInterceptor());
await app.listen();
exitOnSigterm(() => app.close());
