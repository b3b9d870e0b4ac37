// Where a webhook may point: http(s), no credentials in the URL, and a host that resolves only to public addresses —
// never loopback, private, link-local (the cloud metadata service among them), shared, multicast or reserved ones.
// Checked when a subscription is saved, and again on every delivery on the address actually connected to, so a DNS
// answer that changes afterwards (rebinding) cannot reach inside. WMS_ALLOW_PRIVATE_WEBHOOK_URLS=1 lifts it (tests,
// single-host installs).
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { ApiError } from '../../domain/errors.ts';

const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128], ['::1', 128], ['64:ff9b::', 96], ['100::', 64], ['2001:db8::', 32], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8],
] as const) blocked.addSubnet(network, prefix, 'ipv6');

export const invalidWebhookUrl = (message: string) => new ApiError(422, 'invalid_webhook_url', message);

export const privateUrlsAllowed = () => process.env.WMS_ALLOW_PRIVATE_WEBHOOK_URLS === '1';

/** Whether a webhook may connect to this address (IPv4-mapped IPv6 addresses are judged as the IPv4 they carry). */
export function isPublicAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return isPublicAddress(mapped);
  const family = isIP(address);
  if (family === 0) return false;
  return !blocked.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** The URL, checked: 422 invalid_webhook_url naming what is wrong. */
export async function checkWebhookUrl(text: string): Promise<URL> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalidWebhookUrl('url is not an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalidWebhookUrl('url must be http or https');
  if (url.username || url.password) throw invalidWebhookUrl('url must not carry credentials');
  if (privateUrlsAllowed()) return url;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((answer) => answer.address);
  } catch {
    throw invalidWebhookUrl(`${host} does not resolve`);
  }
  const inside = addresses.find((address) => !isPublicAddress(address));
  if (inside) throw invalidWebhookUrl(`${host} resolves to ${inside}, an internal address`);
  return url;
}
