export { generateCertificates, type TestCertificates } from './certificates';
export { startFakePveServer, type FakeHandler, type FakePveServer, type FakePveServerOptions, type FakeReply, type FakeRequest } from './fake-server';
