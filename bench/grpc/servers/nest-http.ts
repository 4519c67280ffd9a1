/**
 * NestJS as an HTTP app (@nestjs/platform-express, Nest's default): a controller with
 * `@Get('hello')` under `@Controller('v1')` and the global same-work interceptor
 * (nest-interceptor.ts).
 */
import 'reflect-metadata';
import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { SameWorkInterceptor } from './nest-interceptor.js';
import { exitOnSigterm } from './same-work.js';
import { HELLO, port } from './serve.js';

class HelloController {
  hello(): typeof HELLO {
    return HELLO;
  }
}
Reflect.decorate([Controller('v1')], HelloController);
Reflect.decorate(
  [Get('hello')],
  HelloController.prototype,
  'hello',
  Object.getOwnPropertyDescriptor(HelloController.prototype, 'hello'),
);

class AppModule {}
Reflect.decorate([Module({ controllers: [HelloController] })], AppModule);

const app = await NestFactory.create(AppModule, { logger: ['error', 'warn'] });
app.useGlobalInterceptors(new SameWorkInterceptor());
await app.listen(port(), '127.0.0.1');
exitOnSigterm(() => app.close());
