import { loadGatewayConfig } from './config';

/**
 * Defaults that keep a developer's stack private:
 * the ops port serving `/metrics` listens on loopback unless the deployment
 * says otherwise (compose and Kubernetes set `METRICS_HOST=0.0.0.0`).
 */
describe('gateway config defaults', () => {
  it('serves metrics on loopback by default', () => {
    expect(loadGatewayConfig({}).METRICS_HOST).toBe('127.0.0.1');
  });

  it('takes another METRICS_HOST when set', () => {
    expect(loadGatewayConfig({ METRICS_HOST: '0.0.0.0' }).METRICS_HOST).toBe('0.0.0.0');
  });
});
