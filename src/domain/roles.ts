// Roles and permission codes of CONTRACT.md. A key's effective permissions are its scopes that its user's role has.

export const PERMISSIONS = [
  'orders.view', 'orders.create', 'orders.edit', 'orders.release',
  'inventory.view', 'inventory.edit', 'inventory.import',
  'customers.view', 'customers.edit',
  'manufacturers.view', 'manufacturers.edit',
  'receiving.view', 'receiving.create', 'receiving.inspect', 'receiving.qc', 'receiving.post',
  'cycle_counts.view', 'cycle_counts.count', 'cycle_counts.approve',
  'history.view', 'admin.api_keys',
  'picking.execute', 'shipping.edit', 'exceptions.view', 'exceptions.review', 'webhooks.manage',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

export const ROLES = ['system_admin', 'manager', 'office', 'warehouse', 'qc', 'consignor', 'partner_portal'] as const;
export type Role = (typeof ROLES)[number];

interface RoleDefinition {
  /** Users of the role belong to one supply partner and see only its data. */
  partnerScoped: boolean;
  /** Administers users and reference data; every other role lacks this whatever its permissions. */
  administers: boolean;
  /** The role's keys cannot use /api/v1 at all (403). */
  apiAccess: boolean;
  permissions: readonly Permission[];
}

export const ROLE_DEFINITIONS: Record<Role, RoleDefinition> = {
  system_admin: { partnerScoped: false, administers: true, apiAccess: true, permissions: PERMISSIONS },
  manager: { partnerScoped: false, administers: false, apiAccess: true, permissions: PERMISSIONS },
  office: {
    partnerScoped: false, administers: false, apiAccess: true,
    permissions: [
      'orders.view', 'orders.create', 'orders.edit', 'orders.release', 'customers.view', 'customers.edit',
      'manufacturers.view', 'inventory.view', 'receiving.view', 'history.view', 'exceptions.view',
    ],
  },
  warehouse: {
    partnerScoped: false, administers: false, apiAccess: true,
    permissions: [
      'inventory.view', 'receiving.view', 'receiving.create', 'receiving.inspect', 'receiving.post', 'picking.execute',
      'shipping.edit', 'cycle_counts.view', 'cycle_counts.count', 'exceptions.view',
    ],
  },
  qc: { partnerScoped: false, administers: false, apiAccess: true, permissions: ['inventory.view', 'receiving.view', 'receiving.qc'] },
  consignor: {
    partnerScoped: true, administers: false, apiAccess: true,
    permissions: [
      'orders.view', 'orders.create', 'orders.edit', 'orders.release', 'inventory.view', 'inventory.edit',
      'inventory.import', 'receiving.view', 'receiving.create', 'customers.view', 'manufacturers.view', 'history.view',
      'exceptions.view', 'webhooks.manage',
    ],
  },
  partner_portal: { partnerScoped: true, administers: false, apiAccess: false, permissions: [] },
};

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

export function rolePermissions(role: string): readonly Permission[] {
  return isRole(role) ? ROLE_DEFINITIONS[role].permissions : [];
}

/** Scopes ∩ role permissions, in the order of PERMISSIONS. */
export function effectivePermissions(scopes: readonly string[], role: string): Permission[] {
  const granted = new Set(scopes);
  return rolePermissions(role).filter((permission) => granted.has(permission));
}
